"""placeholder"""
from __future__ import annotations
from typing import Any
async def run_on_board(target: Any, elf: Any, workdir: Any, request: Any, on_output: Any) -> Any:
    raise NotImplementedError
