"""The app's entry points: ``convtui session`` (run_session) and ``convtui session --study``
(run_study_session). tui/launch.py decides what the app opens with; these open the store, the
model backends and the executor, run the app (convtui.tui.run_tui), and close everything
however it ended. The app and the terminal check are looked up when called, so that tests
can stand in for them (convtui.tui.run_tui, launch.has_screen)."""

from __future__ import annotations

import convtui.tui as tui
from convtui.core.catalog.loaders import TaskCatalog, load_catalog
from convtui.core.errors import ConvtuiError
from convtui.core.printable import printable
from convtui.core.services import ModelOptions, open_execution, open_models
from convtui.tui import launch
from convtui.tui.controller import AppServices
from convtui.tui.launch import (
    Launch,
    SessionOptions,
    StudySessionOptions,
    next_plan,
    open_services,
    open_study_store,
    plan_launch,
    served_by_textual,
    session_config,
    study_ref,
)
from convtui.tui.runner import AsyncRunner


def run_session(options: SessionOptions, catalog: TaskCatalog) -> int:
    config = session_config(options, options.user)
    if options.resume and options.task:
        raise ConvtuiError("give --task or --resume, not both (a resumed session has its task)")
    if options.resume and not options.db.exists():
        raise ConvtuiError(
            f"no database at {options.db} to resume from: give the --db the session was recorded in"
        )
    if not launch.has_screen():
        raise ConvtuiError(
            "convtui session needs a terminal (stdin and stdout must be a TTY); for headless "
            "runs use convtui bench live"
        )
    services = open_services(options, config)
    try:
        opened = plan_launch(options, catalog, services.store, config)
        return tui.run_tui(services, opened)
    finally:
        services.close()


def run_study_session(options: StudySessionOptions) -> int:
    """Open the annotator's next assignment in the app; with none left, say so and return.
    The study and the annotator are checked before the catalog loads."""
    store = open_study_store(options.db)
    try:
        study, config, user = study_ref(store, options.annotator)
        machine = options.machine
        catalog = load_catalog(machine.suite, machine.data)
        plan = next_plan(store, catalog, study, config, user)
        # In a terminal there is nothing to open; in a browser the page would only go blank,
        # so there the app opens on their list of assignments, saying so.
        if plan is None and not served_by_textual():
            print(
                f"Study {study.name!r} is done for {printable(study.annotator)}: every "
                "assignment is finished. Thank you!"
            )
            return 0
        if not launch.has_screen():
            raise ConvtuiError("convtui session needs a terminal (stdin and stdout must be a TTY)")
        if served_by_textual():
            from convtui.tui.web.lifeline import end_with_server, hold_to_memory_limit

            end_with_server()
            hold_to_memory_limit()
        models = open_models(config, ModelOptions(machine.model_name, machine.chat_template))
        executor = open_execution(
            machine.executor, python=machine.python, jobs=machine.jobs, isolation=machine.isolation
        )
    except BaseException:
        store.close()
        raise
    services = AppServices(store, models, executor, AsyncRunner())
    try:
        opened = Launch(
            catalog, config, user, plan, annotator=study.annotator, study=study, machine=machine
        )
        return tui.run_tui(services, opened)
    finally:
        services.close()
