"""Checks `agy-decode --format anthropic` lines against the official
`anthropic` SDK's request types and the Messages API's sequencing rules.

Usage: python anthropic_check.py FILE

Each line, with "conversation" taken out and "model" and "max_tokens" put
in, must be a MessageCreateParamsNonStreaming. The SDK's types are
TypedDicts, which accept any extra key, so the check walks the value
against their annotations itself and refuses every key a type does not
declare. pydantic (which the SDK uses) then validates the same request as a
second opinion. Prints one line per failure and exits 1 if there was any.
"""

import collections.abc
import json
import re
import sys
import types
import typing

import pydantic
import typing_extensions
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

IMAGE_TYPES = {"image/jpeg", "image/png", "image/gif", "image/webp"}
ID = re.compile(r"^[a-zA-Z0-9_-]+$")
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
WRAPPERS = {typing_extensions.Required, typing_extensions.NotRequired}
if hasattr(typing, "Required"):
    WRAPPERS |= {typing.Required, typing.NotRequired}
SEQUENCES = {list, collections.abc.Iterable, collections.abc.Sequence}


def check(value, tp, path):
    """The reasons `value` is not of type `tp`, as a list."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp in (typing.Any, object):
        return []
    if origin in WRAPPERS or origin is typing_extensions.Annotated:
        return check(value, args[0], path)
    if origin in (typing.Union, types.UnionType):
        # A block names its arm by its "type".
        if isinstance(value, dict) and "type" in value:
            named = [arm for arm in args if value["type"] in literal_types(arm)]
            args = named or args
        attempts = [check(value, arm, path) for arm in args]
        if any(not errors for errors in attempts):
            return []
        # The arm that got furthest into the value says most.
        best = max(attempts, key=lambda errors: (max(len(e.split(": ")[0]) for e in errors), -len(errors)))
        return best[:3]
    if origin in (typing.Literal, typing_extensions.Literal):
        return [] if value in args else [f"{path}: {value!r} is not one of {args}"]
    if typing_extensions.is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{path}: expected an object for {tp.__name__}"]
        hints = typing_extensions.get_type_hints(tp, include_extras=True)
        errors = [f"{path}: unknown key {key!r} for {tp.__name__}" for key in value if key not in hints]
        errors += [f"{path}: missing key {key!r} of {tp.__name__}" for key in tp.__required_keys__ if key not in value]
        for key, item in value.items():
            if key in hints:
                errors += check(item, hints[key], f"{path}.{key}")
        return errors
    if origin in SEQUENCES or getattr(origin, "__name__", "") == "SequenceNotStr":
        if not isinstance(value, list):
            return [f"{path}: expected an array"]
        errors = []
        for i, item in enumerate(value):
            errors += check(item, args[0] if args else typing.Any, f"{path}[{i}]")
        return errors
    if origin in (dict, collections.abc.Mapping):
        if not isinstance(value, dict):
            return [f"{path}: expected an object"]
        errors = []
        for key, item in value.items():
            errors += check(item, args[1] if args else typing.Any, f"{path}.{key}")
        return errors
    if tp is type(None):
        return [] if value is None else [f"{path}: expected null"]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{path}: expected a boolean"]
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected an integer"]
    if tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected a number"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{path}: expected a string"]
    return [f"{path}: the checker does not know the type {tp!r}"]


def literal_types(arm):
    """The values an arm's "type" key may take (none if it has no such key)."""
    if not typing_extensions.is_typeddict(arm):
        return ()
    hint = typing_extensions.get_type_hints(arm).get("type")
    while typing.get_origin(hint) in WRAPPERS:
        hint = typing.get_args(hint)[0]
    return typing.get_args(hint) if typing.get_origin(hint) in (typing.Literal, typing_extensions.Literal) else ()


def blocks(message):
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def sequencing(request):
    """The reasons `request` breaks the Messages API's rules."""
    errors = []
    messages = request["messages"]
    if not messages:
        return ["messages is empty"]
    if messages[0]["role"] != "user":
        errors.append("the first message is not the user's")
    for a, b in zip(messages, messages[1:]):
        if a["role"] == b["role"]:
            errors.append(f"two {a['role']} messages in a row")
    tools = {tool["name"] for tool in request.get("tools", [])}
    seen_ids = set()
    system = request.get("system")
    if system is not None and not str(system).strip():
        errors.append("system is blank")
    for i, message in enumerate(messages):
        content = blocks(message)
        if not content:
            errors.append(f"messages[{i}] has no content")
        for block in content:
            kind = block["type"]
            if kind == "text" and not block["text"].strip():
                errors.append(f"messages[{i}] has whitespace-only text")
            if kind == "thinking":
                errors.append(f"messages[{i}] has thinking, whose Gemini signature Anthropic cannot verify")
            if kind == "image" and block["source"]["type"] == "base64":
                if block["source"]["media_type"] not in IMAGE_TYPES:
                    errors.append(f"messages[{i}] has an image of type {block['source']['media_type']}")
            if kind == "tool_use":
                if not ID.match(block["id"]) or block["id"] in seen_ids:
                    errors.append(f"messages[{i}] tool_use id {block['id']!r} is malformed or repeated")
                seen_ids.add(block["id"])
                if not NAME.match(block["name"]) or block["name"] not in tools:
                    errors.append(f"messages[{i}] tool name {block['name']!r} is malformed or undeclared")
            if kind == "tool_result" and isinstance(block.get("content"), str):
                if not block["content"].strip():
                    errors.append(f"messages[{i}] has a whitespace-only result")
        calls = [b["id"] for b in content if b["type"] == "tool_use"]
        kinds = [b["type"] for b in content]
        if "tool_result" in kinds and kinds.index("tool_result") > 0 and kinds[0] != "tool_result":
            errors.append(f"messages[{i}] has results after other content")
        results = [b["tool_use_id"] for b in content if b["type"] == "tool_result"]
        firsts = kinds[: len(results)]
        if any(k != "tool_result" for k in firsts):
            errors.append(f"messages[{i}]: tool_result blocks are not all first")
        if results:
            before = messages[i - 1] if i > 0 else None
            answered = [b["id"] for b in blocks(before) if b["type"] == "tool_use"] if before else []
            if sorted(results) != sorted(answered):
                errors.append(f"messages[{i}] answers {results}, the turn before called {answered}")
        if calls:
            after = messages[i + 1] if i + 1 < len(messages) else None
            if after is None:
                errors.append(f"messages[{i}] ends the request with unanswered calls")
    last = messages[-1]
    if last["role"] == "assistant":
        texts = [b for b in blocks(last) if b["type"] == "text"]
        if texts and blocks(last)[-1]["type"] == "text" and texts[-1]["text"] != texts[-1]["text"].rstrip():
            errors.append("the final assistant text ends in whitespace")
    return errors


def consume(value):
    """pydantic validates Iterable fields lazily: walk them so it does."""
    if isinstance(value, dict):
        return {k: consume(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ValidatorIterator":
        return [consume(v) for v in value]
    return value


def main():
    adapter = pydantic.TypeAdapter(MessageCreateParamsNonStreaming)
    failures = 0
    checked = 0
    with open(sys.argv[1], encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            document = json.loads(line)
            conversation = document.pop("conversation", None)
            if conversation is None:
                print(f"line {number}: no conversation key")
                failures += 1
                continue
            request = {"model": "claude-sonnet-4-5", "max_tokens": 1024, **document}
            errors = check(request, MessageCreateParamsNonStreaming, "request")
            errors += sequencing(request)
            try:
                consume(adapter.validate_python(request))
            except pydantic.ValidationError as e:
                errors.append(f"pydantic: {e}")
            for error in errors:
                print(f"line {number} ({conversation}): {error}")
            failures += bool(errors)
            checked += 1
    print(f"anthropic {__import__('anthropic').__version__}: {checked} requests checked, {failures} failed")
    sys.exit(1 if failures or not checked else 0)


if __name__ == "__main__":
    main()
