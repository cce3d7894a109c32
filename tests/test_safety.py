"""Byte/zip checks and the sandbox: a child that aborts or overruns costs one job."""

from __future__ import annotations

import signal

from sheetflow.workbook.safety import Limits, Sandbox, column_number, inspect_file


def test_sandbox_survives_abort_memory_and_timeout():
    limits = Limits(memory_bytes=512 * 2**20, timeout_seconds=3)
    aborts = Sandbox(signal.raise_signal, limits).run([signal.SIGABRT])
    assert aborts[0].kind == "aborted" and "SIGABRT" in aborts[0].reason
    memory = Sandbox(bytearray, limits).run([8 * 2**30, 10])
    assert memory[0].kind == "aborted" and "memory" in memory[0].reason
    assert memory[1].ok and memory[1].value == bytearray(10)


def test_sandbox_time_limit_then_next_job_runs():
    import time

    limits = Limits(timeout_seconds=1)
    out = Sandbox(time.sleep, limits).run([30, 0])
    assert out[0].kind == "aborted" and "time limit" in out[0].reason
    assert out[1].ok


def test_parser_exception_is_a_reason(tmp_path):
    out = Sandbox(int, Limits()).run(["not a number"])
    assert out[0].kind == "error" and "ValueError" in out[0].reason


def test_magic_checks(tmp_path):
    cases = {b"": "empty-file", b"a,b\n1,2\n": "not-a-workbook",
             b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600: "legacy-xls",
             b"PK\x03\x04garbage": "corrupt-file"}
    for i, (data, code) in enumerate(cases.items()):
        path = tmp_path / f"f{i}.xlsx"
        path.write_bytes(data)
        assert inspect_file(path).problem.code == code


def test_column_number():
    assert column_number("A") == 1 and column_number("XFD") == 16384
