"""Shared fixtures for end-to-end tests that drive the real trtwatch binary."""
import json
import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("TRTWATCH_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
BIN = os.environ.get("TRTWATCH_BIN", str(SOURCE_DIR / "build" / "trtwatch"))


def run(*args, timeout=120, env=None, **kwargs):
    """Runs trtwatch with `args`; returns the CompletedProcess (text mode)."""
    full_env = dict(os.environ)
    full_env.pop("TRTWATCH_PROGRESS", None)
    if env:
        full_env.update(env)
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, env=full_env, **kwargs)


def validate_events(events, schema):
    """Checks each event against docs/events.schema.json, the validator compiled once
    (jsonschema.validate compiles it again for every event: seconds per build)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    for event in events:
        validator.validate(event)


def parse_stream(text):
    """Parses JSON lines; every non-empty line must be one JSON object."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="session")
def schema():
    with open(SOURCE_DIR / "docs" / "events.schema.json") as f:
        return json.load(f)
