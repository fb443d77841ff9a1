"""``convtui serve``: a study's app served to annotators' browsers."""

from __future__ import annotations

from convtui.errors import user_errors
from convtui.option_groups import ExecutorGroup, takes_groups
from convtui.options import ChatTemplateOpt, DataOpt, ModelNameOpt
from convtui.study_options import (
    ServeAllowHostOpt,
    ServeAppMemoryOpt,
    ServeAppOpensOpt,
    ServeHostOpt,
    ServeIdleTimeoutOpt,
    ServeMaxAppsOpt,
    ServeMaxConnectionsOpt,
    ServeMaxPerNetworkOpt,
    ServeMaxStartingOpt,
    ServePortOpt,
    StudyDbOpt,
)


@takes_groups
def serve(
    *,
    db: StudyDbOpt,
    host: ServeHostOpt = "127.0.0.1",
    port: ServePortOpt = 8000,
    max_apps: ServeMaxAppsOpt = 32,
    max_starting: ServeMaxStartingOpt = None,
    allow_host: ServeAllowHostOpt = None,
    max_connections: ServeMaxConnectionsOpt = 512,
    max_per_network: ServeMaxPerNetworkOpt = 128,
    idle_timeout: ServeIdleTimeoutOpt = 10.0,
    max_app_opens: ServeAppOpensOpt = 10,
    app_memory_mb: ServeAppMemoryOpt = 2048,
    data: DataOpt = None,
    model_name: ModelNameOpt = None,
    chat_template: ChatTemplateOpt = None,
    executor: ExecutorGroup,
) -> None:
    """Serve a study's app to annotators' browsers: each gives their token and gets their
    own assignments, in the same app as `session --study`.

    A wrong or missing token gets a refusal page and no app; each annotator's app is theirs
    alone (a second tab replaces the first). Loopback by default: put a reverse proxy with
    TLS in front to reach people elsewhere (README, Studies). The page loads nothing from
    outside this server.

    Example: [bold]convtui serve --db study.db --port 8000[/bold]"""
    with user_errors():
        from convtui.tui.web.connections import Caps
        from convtui.tui.web.serve_study import ServeOptions, serve_command

        machine = executor.machine("all", data, model_name, chat_template)
        caps = Caps(max_connections, max_per_network, idle_s=idle_timeout)
        serve_command(
            ServeOptions(
                db,
                host,
                port,
                machine,
                max_apps,
                max_starting,
                caps,
                max_app_opens,
                app_memory_mb,
                tuple(allow_host or ()),
            )
        )
