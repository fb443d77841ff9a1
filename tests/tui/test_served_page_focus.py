"""The served page takes keys from the moment it is ready: after sign-in a person types
without clicking first (issue 34). Real Chromium (headless, via Playwright) on a real
`convtui serve`, with the scripted ``mock:`` model."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.browser import ServedStudy, served_study, signed_in
from support.studies import scripted_study

pytestmark = pytest.mark.timeout(300)


def test_keys_typed_after_sign_in_reach_the_app_without_a_click(tmp_path: Path) -> None:
    db = scripted_study(tmp_path)

    async def scenario(served: ServedStudy) -> None:
        async with signed_in(served) as page:
            await page.wait_for("waiting for your feedback", timeout=60)
            focused = await page.page.evaluate("document.activeElement.className")
            assert "xterm-helper-textarea" in focused
            await page.type("no click needed")  # no focus() or click() before it
            await page.wait_for("no click needed", timeout=10)

    with served_study(db, tmp_path) as served:
        asyncio.run(scenario(served))
