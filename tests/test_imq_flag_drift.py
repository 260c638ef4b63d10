"""Every imq flag the bridge names exists in the real imq 5.2.2, with the meaning it assumes.

The bridge names flags in four places: the options it passes itself (fleet's -u/-c/-v,
logs' --no-follow/--clean, client generate's -o, create's --dry-run), its hints and refusals,
the tool descriptions and the input schemas' field descriptions. cli_bridge.IMQ_OPTIONS pairs
each with the long name imq must show for it in `imq <command> --help` ("-c" must be
"--calm" in ctl, "--clean" in log). These tests read the real help (tests/imq_real.py) and
fail when imq lacks a named flag or gives it another meaning, and when the bridge names a
flag that IMQ_OPTIONS does not list.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from imq_real import real_imq_environment, require_real_imq, run_imq

from imqueue_mcp.server.imq.arguments import BRIDGE_OWNED_OPTIONS
from imqueue_mcp.server.imq.bridge import IMQ_OPTIONS
from imqueue_mcp.server.mcp.tools import record_of

from conftest import REPO, stdio_connection

CLI_TOOLS = ("cli_status", "cli_help", "create_service", "generate_client", "fleet", "config", "logs")
# The modules that build imq's argv and word its outcome (server/imq/runner.py only runs a program).
BRIDGE_MODULES = ("server/imq/bridge.py", "server/imq/arguments.py")
# A flag as a text names it: '-c', '--calm', '--email=x', '--no-use-git', not '-32602', 'a-z',
# './-dir' or the inline value of '--author=-Bob'.
FLAG = re.compile(r"(?<![\w./=-])(--?[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)(?![\w-])")
# An option line of yargs' help: "  -c, --calm  Calm start ...  [boolean] [default: false]"
HELP_OPTION = re.compile(r"^\s+((?:-[A-Za-z], )?--[A-Za-z][\w-]*(?:, --[A-Za-z][\w-]*)*)\s{2,}(.*)$")


@dataclass(frozen=True)
class HelpOption:
    short: str  # "" when imq has none
    longs: tuple[str, ...]
    boolean: bool


@functools.cache
def help_options(command: str, scratch: Path) -> dict[str, HelpOption]:
    """Every option of `imq <command> --help`, by each of its names."""
    shown = run_imq([*command.split(), "--help"], scratch, scratch / "imq-home")
    assert shown.returncode == 0, shown.stderr
    options: dict[str, HelpOption] = {}
    for line in shown.stdout.splitlines():
        found = HELP_OPTION.match(line)
        if not found:
            continue
        names = [name.strip() for name in found[1].split(",")]
        short = names[0] if not names[0].startswith("--") else ""
        option = HelpOption(short, tuple(n for n in names if n.startswith("--")), "[boolean]" in found[2])
        for name in names:
            options[name] = option
    assert options, shown.stdout
    return options


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_real_imq()
    return tmp_path_factory.mktemp("imq-help")


@pytest.mark.parametrize(
    ("command", "short", "long"),
    [(command, short, long) for command, pairs in IMQ_OPTIONS.items() for short, long in pairs],
)
def test_each_option_the_bridge_passes_has_that_meaning_in_real_imq(
    scratch: Path, command: str, short: str, long: str
) -> None:
    options = help_options(command, scratch)

    assert long in options, f"imq {command} --help has no {long}"
    assert options[long].short == short, (
        f"in imq {command}, {long} is {options[long].short or 'without a short form'}, "
        f"the bridge assumes {short or 'none'}"
    )
    if short:
        assert long in options[short].longs, (
            f"in imq {command}, {short} is {options[short].longs}, not {long}"
        )


def test_fleet_clean_is_gone_and_calm_is_ctl_c(scratch: Path) -> None:
    """issue 12 #5: `imq ctl -c` is --calm; imq ctl has no clean, so the bridge offers none."""
    ctl = help_options("ctl", scratch)

    assert ctl["-c"].longs == ("--calm",)
    assert "--clean" not in ctl
    assert ("-c", "--calm") in IMQ_OPTIONS["ctl"]


def test_the_options_the_bridge_refuses_as_its_own_exist_in_service_create(scratch: Path) -> None:
    options = help_options("service create", scratch)

    for name in BRIDGE_OWNED_OPTIONS:
        if name.islower():  # the dashed spelling; yargs also takes the camelCase alias
            assert f"--{name}" in options, name


def named_flags(text: str) -> set[str]:
    """The flags a text names, a group of one-letter flags (-yf) as its letters (-y, -f)."""
    flags = set()
    for flag in FLAG.findall(text):
        if flag.startswith("--"):
            flags.add(flag)
        else:
            flags |= {f"-{letter}" for letter in flag[1:]}
    return flags


def string_constants(path: Path) -> list[str]:
    """Every string literal of a module, f-string parts included: what it can say or pass."""
    tree = ast.parse(path.read_text())
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def bridge_texts(tmp_path: Path) -> dict[str, str]:
    """What the bridge says and passes, by where: tool descriptions, input schemas (from a real
    server's tools/list), and the string literals of the bridge modules."""
    connection = stdio_connection([], real_imq_environment(tmp_path), tmp_path, "legacy")
    try:
        tools = {tool.name: tool for tool in connection.tools()}
    finally:
        connection.close()
    texts = {f"description of {name}": record_of(name).description for name in CLI_TOOLS}
    texts |= {f"schema of {name}": json.dumps(tools[name].input_schema) for name in CLI_TOOLS}
    for module in BRIDGE_MODULES:
        for index, literal in enumerate(string_constants(REPO / module)):
            if "npm" not in literal:  # `npm install -g` (cli_install) names npm's flags, not imq's
                texts[f"{module} string {index}"] = literal
    return texts


def test_every_flag_the_bridge_names_is_an_imq_option_it_knows_the_meaning_of(
    scratch: Path, tmp_path: Path
) -> None:
    known = {name for pairs in IMQ_OPTIONS.values() for pair in pairs for name in pair if name}
    unknown = []
    for where, text in bridge_texts(tmp_path).items():
        for flag in named_flags(text):
            base = "--" + flag.removeprefix("--no-") if flag.startswith("--no-") else flag
            if base not in known:
                unknown.append(f"{flag} in {where}: {text[:120]!r}")
    assert unknown == [], "flags named but not in cli_bridge.IMQ_OPTIONS:\n" + "\n".join(unknown)


def test_every_negated_flag_the_bridge_names_is_a_boolean_of_real_imq(scratch: Path, tmp_path: Path) -> None:
    negated = {
        flag
        for text in bridge_texts(tmp_path).values()
        for flag in named_flags(text)
        if flag.startswith("--no-")
    }
    commands = {long: command for command, pairs in IMQ_OPTIONS.items() for _, long in pairs}
    assert negated, "the bridge names --no-use-git, --no-install, --no-follow and --no-prefix"
    for flag in negated:
        base = "--" + flag.removeprefix("--no-")
        assert base in commands, f"{flag}: {base} is not in cli_bridge.IMQ_OPTIONS"
        option = help_options(commands[base], scratch)[base]
        assert option.boolean, f"{flag}: {base} is not a boolean of imq {commands[base]}"


def test_no_flag_imq_lacks_is_named_anywhere(tmp_path: Path, scratch: Path) -> None:
    """The flags of issue 12 that imq 5.2.2 does not have."""
    named = {flag for text in bridge_texts(tmp_path).values() for flag in named_flags(text)}

    assert not named & {"--no-git", "--git", "--dockerhub-namespace", "--node-version"}
