"""What a session runs on besides its config, opened the same way for both front ends: the
code model, the model that plays the user, and the sandboxed executor."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from convtui.core.errors import ConvtuiError
from convtui.core.execution.backend import ExecutionBackend
from convtui.core.execution.choice import ExecutorChoice
from convtui.core.execution.executor import Executor
from convtui.core.extras import install_hint
from convtui.core.models.base import ModelBackend
from convtui.core.models.registry import open_backend
from convtui.core.settings.config import SessionConfig

NO_SANDBOX = (
    "no sandbox is available here (bubblewrap, namespaces or Landlock): install convtui's "
    f"exec extra ({install_hint('exec')}, it bundles bubblewrap) or pass --isolation none "
    "to run model code unconfined"
)


@dataclass(frozen=True)
class ModelOptions:
    """How the command line names the models beyond the config: ``model_name`` picks the
    model on an ``http://`` server, ``chat_template`` says where that model's template is."""

    model_name: str | None = None
    chat_template: Path | None = None


@dataclass(frozen=True)
class Models:
    """The code model and, when another model plays the user, that one (None: the code model
    plays it, or no configuration has verbal feedback)."""

    coder: ModelBackend
    simulator: ModelBackend | None

    @property
    def user(self) -> ModelBackend:
        """The model that plays the user."""
        return self.simulator or self.coder

    async def check(self) -> None:
        """Fail fast with the first model's one-line reason (see ModelBackend.check)."""
        await self.coder.check()
        if self.simulator is not None:
            await self.simulator.check()

    async def aclose(self) -> None:
        await self.coder.aclose()
        if self.simulator is not None:
            await self.simulator.aclose()


def open_models(config: SessionConfig, options: ModelOptions) -> Models:
    """The backends ``config`` names; nothing is contacted yet (``Models.check`` does it)."""
    coder = open_backend(
        config.model, model_name=options.model_name, chat_template=options.chat_template
    )
    simulator = None
    if config.simulator and config.simulator != config.model:
        simulator = open_backend(config.simulator)
    return Models(coder, simulator)


def open_executor(*, python: str | None, jobs: int | None, isolation: str) -> Executor:
    """The executor, refusing to run model code unconfined unless asked to (``none``)."""
    executor = Executor(python=python, jobs=jobs, isolation=isolation)
    if executor.isolation.level == "none" and isolation != "none":
        executor.close()
        raise ConvtuiError(NO_SANDBOX)
    return executor


def open_execution(
    choice: ExecutorChoice,
    *,
    python: str | None,
    jobs: int | None,
    isolation: str,
    model_code: bool = True,
) -> ExecutionBackend:
    """The executor ``choice`` names (``--executor local|ray[:ADDRESS]``). For
    ``model_code`` it refuses to run unconfined unless ``isolation`` is ``none``; Ray is
    imported only for ``ray``."""
    if choice.kind == "local":
        if model_code:
            return open_executor(python=python, jobs=jobs, isolation=isolation)
        return Executor(python=python, jobs=jobs, isolation=isolation)
    from convtui.core.execution.cluster.pool import RayExecutor

    backend = RayExecutor(choice.address, python=python, jobs=jobs, isolation=isolation)
    if model_code and backend.isolation.level == "none" and isolation != "none":
        backend.close()
        raise ConvtuiError(NO_SANDBOX)
    return backend
