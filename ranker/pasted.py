"""A pasted error output reduced to what it says: its message lines, not its stack frames.

Agents paste what a failing command printed, whole: the error line, then a V8 stack trace
(`    at Module._compile (node:internal/modules/cjs/loader:1376:14)`), tsc's source excerpt and its
`~~~~` markers, the `Node.js v22.11.0` footer, paths through node_modules. Every frame is words
(module, compile, internal, loader, process, promise) that match pages about something else, and
their idf counts against every record's coverage, so the one page that explains the error ranks
low and even a right answer is marked weak. What the output *says* is in its other lines.

    distill("Error: connect ECONNREFUSED 127.0.0.1:6379\\n    at TCPConnectWrap.afterConnect "
            "[as oncomplete] (node:net:1555:16)")
        -> "Error: connect ECONNREFUSED 127.0.0.1:6379"

Left out: frames, caret/tilde markers, bare file locations and the code Node prints under one
(the thrower's, not what went wrong), the Node.js version footer, the error's field dump
(`  errno: -111,`, `}`) and a stack dumped in it as a string split over lines, npm's tag on each
line and its own fields (`path /home/dev/x`), a line said twice, a process's status lines (`…: reader
channel connected, host 127.0.0.1:6379, pid 24885`) beside the others. Kept: every other line; a dumped
`message:` or `code:` value no kept line says (a thrown plain object, `{ code: 'IMQ_RPC_CALL_TIMEOUT',
message: 'Call to …' }`, has no other); a tsc excerpt's code without its line number; a path without
its folders up to and including node_modules (`/app/node_modules/@imqueue/rpc/index.js:312:27`
-> `@imqueue/rpc/index.js`); and where the error was thrown inside an @imqueue package (its first
frame is there), that package and module (`at file:///app/node_modules/@imqueue/core/src/RedisQueue.js:851:26`
-> `@imqueue/core RedisQueue`): a TypeError thrown inside the framework names neither. A frame of
the framework under the user's own (a method the framework called) adds nothing. A query none of
that applies to comes back as it was; one that would come back empty (it was all frames) is searched
whole. Pure text, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A frame as V8 prints one, its indent optional (pastes lose it): "at fn (where)", "at where",
# "at async fn (where)", "at new Promise (<anonymous>)", "at async Promise.all (index 0)"; where
# is a file or node: location with a line (and column), or one of V8's placeholders.
_WHERE = (
    r"(?:(?:node:|file:|[A-Za-z]:\\|[/\\.~]|[\w@.-]+[/\\])[^\s()]*:\d+(?::\d+)?"
    r"|node:[\w/.-]+|<anonymous>|index \d+|native)"
)
_FRAME = (
    r"at\s+(?:async\s+)?(?:new\s+)?"
    r"(?:(?:[\w$.<>\[\]#]+)(?:\s+\[as\s+[\w$.<>#]+\])?\s+\(" + _WHERE + r"\)|" + _WHERE + r")"
)
_FRAME_LINE = re.compile(r"^\s*" + _FRAME + r"\s*$")
# A frame inside a line whose newlines a client turned into spaces.
_INLINE_FRAME = re.compile(r"(?<=\s)" + _FRAME)  # (the space before stays: words are re-split)
_MARKER_LINE = re.compile(r"^[\s|]*[~^][\s~^|]*$")  # tsc's ~~~~ and Node's ^^^^ under a code line
_LOCATION_LINE = re.compile(r"^\s*(?:node:\S+|(?:file://)?(?:[A-Za-z]:)?[/\\~.][^\s]*)(?::\d+){1,2}\s*$")
_PATH_LINE = re.compile(r"^\s*(?:file://)?(?:[A-Za-z]:)?[/\\~][^\s]*\s*$")  # a log file's path alone
_TOOL_PREFIX = re.compile(r"^\s*npm (?:error|ERR!|WARN|warn)(?: |$)")  # npm's tag on every line
# npm's own fields under its tag: "code 1", "path /home/dev/project", "errno -13" (not "code ERESOLVE")
_TOOL_FIELD = re.compile(r"^\s*[a-z]+ (?:-?\d+|(?:[A-Za-z]:)?[/\\~]\S*)\s*$")
_FOOTER_LINE = re.compile(r"^\s*Node\.js v\d+(?:\.\d+)*\s*$")
_PYTHON_FRAME_LINE = re.compile(r'^\s*File ".*", line \d+')
# Node's dump of an error's own fields after its trace: "  errno: -111,", "  code: 'ECONNREFUSED',",
# "}", whose keys are the same for every error and whose values the message line already says.
_FIELD_LINE = re.compile(
    r"^\s*[A-Za-z_]\w*: (?:'[^']*'|\"[^\"]*\"|-?\d+|true|false|null|undefined|\[[^\]]*\]),?\s*$"
)
_BRACE_LINE = re.compile(r"^\s*[{}\[\]]+,?\s*$")
# The fields of that dump that say what went wrong. A thrown plain object ({ code, message, stack }
# as @imqueue/rpc rejects a call) has no message line above its dump: these are its message.
_SAYING_FIELD = re.compile(r"^\s*(?:message|code): (?:'([^']*)'|\"([^\"]*)\"),?\s*$")
# A string field Node splits over lines ("  stack: 'Error\\n' +"), and each piece after it
# ("    '    at listOnTimeout (node:internal/timers:585:17)\\n' +"): a dumped stack, left out whole.
_SPLIT_FIELD = re.compile(r"^\s*[A-Za-z_]\w*: '(?:[^'\\]|\\.)*'\s*\+\s*$")
_STRING_PIECE = re.compile(r"^\s*'(?:[^'\\]|\\.)*'\s*(\+?),?\s*$")
_OPENS_DUMP = re.compile(r"(?<=\S)\s+\{\s*$")  # "Error: connect ECONNREFUSED 127.0.0.1:6379 {"
_EXCERPT_LINE = re.compile(r"^\s*\d+\s{2,}(\S.*)$")  # tsc --pretty: "12     @expose()"
# Folders up to and including node_modules, from the start of the path (tried only where a word
# of the text starts, so a long run without spaces is read once, not from each of its characters).
_MODULES_PREFIX = re.compile(r"(?<![^\s'\"()\[\]])[^\s'\"()\[\]]*node_modules[/\\]")
_LINE_COLUMN = re.compile(r"(\.[A-Za-z]\w*):\d+(?::\d+)?")  # index.js:312:27 -> index.js
# A frame inside an @imqueue package (`.../node_modules/@imqueue/core/src/RedisQueue.js:851:26`):
# the package and module the error was thrown in, which the error's own line ("Cannot read
# properties of undefined (reading 'set')") does not name.
_IMQUEUE_FRAME = re.compile(
    r"node_modules[/\\](@imqueue[/\\][a-z0-9][\w.-]*)[/\\](?:[^\s():]*[/\\])?([A-Za-z_$][\w$]*)\.[cm]?[jt]s:\d+"
)
# A process's own status line, logged as it starts ("OrderClient-3d12…-0:client: reader channel
# connected, host 127.0.0.1:38669, pid 24885", "UserService: starting single-worker, pid 8"): a
# running process says its pid. Above the failure in every output of that process, it says nothing
# of it, and its words (channel, connected, host) out-rank the failure's. Left out beside other
# lines only, and only when no word of trouble is in it.
_STATUS_LINE = re.compile(r"\bpid:? \d+\b")
_TROUBLE = re.compile(
    r"(?i)\b(?:error|err|fail\w*|refused|denied|cannot|can't|not|no|unable|invalid|timed|timeout|"
    r"died|dead|exit\w*|kill\w*|crash\w*|lost|clos\w*|warn\w*|abort\w*|reject\w*)\b"
)
_CHEAP_SIGNS = ("\n", " at ", "node_modules", "~~", "^^")
# Lines left out whole.
_DROPPED_LINES = (
    _FRAME_LINE,
    _MARKER_LINE,
    _LOCATION_LINE,
    _FOOTER_LINE,
    _PYTHON_FRAME_LINE,
    _FIELD_LINE,
    _BRACE_LINE,
    _PATH_LINE,
)


@dataclass(frozen=True, slots=True)
class Distilled:
    query: str  # what to search: the query itself when nothing was left out
    dropped: int = 0  # frames, markers, locations and footers left out
    shortened: bool = False  # paths lost their folders up to node_modules, or their :line:column
    cut: bool = False  # what was left ran over the limit and was cut at a word before it

    @property
    def changed(self) -> bool:
        return bool(self.dropped or self.shortened or self.cut)


def searched(query: str, limit: int) -> Distilled:
    """distill(query), cut at the last whole word within `limit` characters: a paste's message
    comes first, and the work a query costs (every word's forms, the typo search for words the docs
    lack) grows with its length."""
    text = distill(query)
    if len(text.query) <= limit:
        return text
    head = text.query[: limit + 1]
    cut = head.rsplit(None, 1)[0] if " " in head.strip() else head[:limit]
    return Distilled(cut[:limit].rstrip(), text.dropped, text.shortened, cut=True)


def distill(query: str) -> Distilled:
    """The query with a pasted output's frames, markers, locations and footer left out (see the
    module's doc). Cheap for a query with none of their signs."""
    if not any(sign in query for sign in _CHEAP_SIGNS):
        return Distilled(query)
    kept: list[str] = []
    dropped = 0
    written = query.splitlines()
    lines = [_TOOL_PREFIX.sub("", line) for line in written]
    seen: set[str] = set()
    thrower: str | None = None  # the first frame's @imqueue package and module, "" for another
    in_split_field = False
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        piece = _STRING_PIECE.match(line) if in_split_field else None
        in_split_field = bool(piece and piece.group(1)) or bool(_SPLIT_FIELD.match(line))
        if piece or in_split_field:
            dropped += 1
            continue
        saying = _SAYING_FIELD.match(line)
        if saying:
            value = saying.group(1) if saying.group(1) is not None else saying.group(2)
            if value.strip() and not any(value in said for said in kept):
                kept.append(value)
                continue
        if line != written[number] and _TOOL_FIELD.match(line):
            dropped += 1
            continue
        said = line in seen
        seen.add(line)
        if said or thrown_at(lines, number):
            dropped += 1  # said already; or the code a location above and a marker below point at
            continue
        if any(pattern.match(line) for pattern in _DROPPED_LINES):
            dropped += 1
            if thrower is None and _FRAME_LINE.match(line):
                thrower = _imqueue_module(line)
            continue
        line = _OPENS_DUMP.sub("", line)
        if thrower is None and (inline := _INLINE_FRAME.search(line)):
            thrower = _imqueue_module(inline.group(0))
        line, frames = _INLINE_FRAME.subn("", line)
        dropped += frames
        excerpt = _EXCERPT_LINE.match(line)
        kept.append(excerpt.group(1) if excerpt and len(kept) > 0 else line)
    status = [line for line in kept if _STATUS_LINE.search(line) and not _TROUBLE.search(line)]
    if status and len(status) < len(kept):
        kept = [line for line in kept if line not in status]
        dropped += len(status)
    if thrower and thrower not in " ".join(kept):
        kept.append(thrower)
    text = " ".join(kept)
    shorter = _LINE_COLUMN.sub(r"\1", _MODULES_PREFIX.sub("", text) if "node_modules" in text else text)
    if not (dropped or shorter != text) or not shorter.strip():
        return Distilled(query)
    return Distilled(" ".join(shorter.split()), dropped, shorter != text)


def _imqueue_module(frame: str) -> str:
    """`@imqueue/core RedisQueue` for a frame inside that package's RedisQueue.js; "" for any other."""
    where = _IMQUEUE_FRAME.search(frame)
    return f"{where.group(1).replace(chr(92), '/')} {where.group(2)}" if where else ""


def thrown_at(lines: list[str], number: int) -> bool:
    """Whether line `number` is the source line Node prints where an error was thrown: under the
    thrower's location (`node:internal/process/promises:391`, a file:line) and over a caret marker.
    It is the thrower's code (a library's, or Node's own), not what went wrong."""
    return (
        0 < number < len(lines) - 1
        and bool(_LOCATION_LINE.match(lines[number - 1]))
        and bool(_MARKER_LINE.match(lines[number + 1]))
    )
