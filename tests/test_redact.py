"""What the hosted endpoint rewrites in an answer (server/hosting/redact.py), in values of every
shape: the quick test that skips answers naming no secret must never skip one that does."""

from __future__ import annotations

from pathlib import Path

from imqueue_mcp.docsource.sites import LIVE_ORIGINS
from imqueue_mcp.server.config import Config
from imqueue_mcp.server.hosting.redact import Redactor

MIRROR = "http://10.0.0.5:8080"


def redactor(tmp_path: Path, snapshot_name: str = "snap.msgpack") -> Redactor:
    origins = dict(LIVE_ORIGINS) | {"imqueue.org": MIRROR}
    return Redactor(Config(offline=True, origins=origins), tmp_path / "cache" / snapshot_name)


def test_an_answer_naming_no_secret_comes_back_as_it_was(tmp_path: Path) -> None:
    answer = {"tools": [{"name": "search_docs", "inputSchema": {"type": "object", "required": ["query"]}}]}
    assert redactor(tmp_path).value(answer) is answer


def test_secrets_are_rewritten_in_keys_values_nested_lists_and_escaped_text(tmp_path: Path) -> None:
    folder = str(tmp_path / "cache")
    answer = {
        "contents": [{"text": f'see "{MIRROR}/api/"\n\tand {folder}/snap.msgpack', "n": 3, "ok": None}],
        f"{folder}/x": [[MIRROR], 1.5],
    }
    assert redactor(tmp_path).value(answer) == {
        "contents": [
            {"text": 'see "https://imqueue.org/api/"\n\tand the server\'s snapshot', "n": 3, "ok": None}
        ],
        "the server's cache folder/x": [["https://imqueue.org"], 1.5],
    }


def test_a_secret_with_characters_json_escapes_is_still_found(tmp_path: Path) -> None:
    """A folder named with a quote, a backslash and a non-ASCII letter: the dumped answer holds
    it escaped, and the quick test looks for it escaped."""
    odd = 'sn"ap\\é.msgpack'
    folder = tmp_path / "cache"
    answer = {"message": f"cannot read {folder / odd}"}
    assert redactor(tmp_path, odd).value(answer) == {"message": "cannot read the server's snapshot"}


def test_a_value_json_cannot_dump_is_walked(tmp_path: Path) -> None:
    answer = {"path": Path("/x"), "text": MIRROR, 1: "one"}
    assert redactor(tmp_path).value(answer) == {"path": Path("/x"), "text": "https://imqueue.org", 1: "one"}
