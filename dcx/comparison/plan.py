"""The comparison plan (``dcx_comparison_plan_v0``) and the files it names (SPEC §11).

Every error is one line naming the file and, where the text allows, the line:
``plan.toml: k[2], line 5: 9 is outside 1..8``,
``qrels.txt, line 12: unknown query 'q99'``,
``queries.jsonl, line 7: duplicate query_id 'q3'``. Paths in the plan are
relative to the plan file. Nothing here runs a provider.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from dcx.core import public
from dcx.core.errors import DcxError, InvalidInput
from dcx.core.fields import Const, Enum, Field, Obj, Records, Shape, Token, bad
from dcx.core.tomlerrors import line_of, load_toml, locate_error

PLAN_SCHEMA = "dcx_comparison_plan_v0"
MAX_K = 8
MAX_PROFILES = 8
MAX_QUERIES = 1000
GRANULARITIES = ("file", "section")


class _Path(Field):
    """A path relative to the plan file (private: checked for shape only)."""

    def check(self, value: Any, path: str) -> Any:
        if not isinstance(value, str) or not value.strip() or len(value) > 4096 or "\x00" in value:
            raise bad(path, "expected a non-empty path", "invalid_type")
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "minLength": 1}


class _Paths(Field):
    def check(self, value: Any, path: str) -> Any:
        if not isinstance(value, list):
            raise bad(path, "expected a list of paths", "invalid_type")
        return [_Path().check(v, f"{path}[{i}]") for i, v in enumerate(value)]

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "string"}}


class _Globs(Field):
    def check(self, value: Any, path: str) -> Any:
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(p, str) and p for p in value)
        ):
            raise bad(path, "expected a non-empty list of glob patterns", "invalid_type")
        return list(value)

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "string"}, "minItems": 1}


class _Cutoffs(Field):
    """Distinct rank cut-offs, each 1..8 (a recall answers at most 8 items)."""

    def check(self, value: Any, path: str) -> Any:
        if not isinstance(value, list) or not value:
            raise bad(path, "expected a non-empty list of cut-offs, e.g. [1, 3, 5]", "invalid_type")
        for i, k in enumerate(value):
            if isinstance(k, bool) or not isinstance(k, int):
                raise bad(f"{path}[{i}]", "expected an integer cut-off", "invalid_type")
            if not 1 <= k <= MAX_K:
                raise bad(
                    f"{path}[{i}]",
                    f"{k} is outside 1..{MAX_K} (recall returns at most {MAX_K} items)",
                    "out_of_range",
                )
        if len(set(value)) != len(value):
            raise bad(path, "holds the same cut-off twice", "duplicate_id")
        return sorted(value)

    def schema(self) -> dict[str, Any]:
        return {
            "type": "array",
            "items": {"type": "integer", "minimum": 1, "maximum": MAX_K},
            "minItems": 1,
        }


_CORPUS = Shape(
    "corpus",
    {
        "path": _Path(),
        "include": _Globs(optional=True),
        "granularity": Enum(values=GRANULARITIES),
    },
)
_PROFILE = Shape(
    "profile_entry",
    {
        "name": Token(limit=64),
        "profile": _Path(),
        "extension": _Path(
            optional=True, doc="An extension manifest installed into the throwaway workspace."
        ),
        "path_prepend": _Paths(
            optional=True, doc="Folders put first on PATH for this profile's recall calls."
        ),
    },
)
PLAN_SHAPE = Shape(
    PLAN_SCHEMA,
    {
        "schema_version": Const(value=PLAN_SCHEMA),
        "corpus": Obj(shape=_CORPUS),
        "queries": _Path(),
        "qrels": _Path(),
        "k": _Cutoffs(),
        "lock": _Path(optional=True),
        "profiles": Records(
            shape=_PROFILE, id_field="name", min_items=1, max_items=MAX_PROFILES, ordered=True
        ),
    },
)


class Query(NamedTuple):
    query_id: str
    query: str
    query_summary: str


class ProfileEntry(NamedTuple):
    name: str
    profile: Path
    extension: Path | None
    path_prepend: tuple[Path, ...]
    field: str  # "profiles[1]", for errors that name the plan line


class Plan(NamedTuple):
    path: Path
    display: str
    text: str
    corpus: Path
    include: tuple[str, ...]
    granularity: str
    queries_path: Path
    qrels_path: Path
    k: tuple[int, ...]
    lock: Path
    profiles: tuple[ProfileEntry, ...]

    def error(
        self, field: str, problem: str, *, code: str = "invalid_plan", hint: str | None = None
    ) -> InvalidInput:
        """``plan.toml: <field>, line N: <problem>``."""
        line = line_of(self.text, field)
        where = f"{self.display}: {field}" + (f", line {line}" if line is not None else "")
        return InvalidInput(f"{where}: {problem}", code=code, field=field, hint=hint)

    def shown(self, path: Path) -> str:
        """A file the plan names, as the plan file is shown: relative to where dcx runs when it
        is below it, else relative to the plan's folder (never an absolute path)."""
        for base in (Path.cwd().resolve(), self.path.parent):
            try:
                return path.resolve().relative_to(base).as_posix()
            except ValueError:
                continue
        return path.name


def shown_path(path: Path) -> str:
    """The plan file as the person typed it, when it is relative; else its name."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.name


def load_plan(path: Path) -> Plan:
    display = shown_path(path)
    if not path.is_file():
        raise InvalidInput(f"{display}: no such plan file", code="plan_not_found")
    data, text = load_toml(path, display)
    try:
        clean = PLAN_SHAPE.check(data, "")
    except InvalidInput as exc:
        raise locate_error(exc, display, text) from None
    base = path.resolve().parent
    profiles = tuple(
        ProfileEntry(
            name=row["name"],
            profile=base / row["profile"],
            extension=base / row["extension"] if "extension" in row else None,
            path_prepend=tuple(base / p for p in row.get("path_prepend", [])),
            field=f"profiles[{i}]",
        )
        for i, row in enumerate(clean["profiles"])
    )
    corpus = clean["corpus"]
    plan = Plan(
        path=path.resolve(),
        display=display,
        text=text,
        corpus=base / corpus["path"],
        include=tuple(corpus.get("include", ["**/*"])),
        granularity=corpus["granularity"],
        queries_path=base / clean["queries"],
        qrels_path=base / clean["qrels"],
        k=tuple(clean["k"]),
        lock=base / clean.get("lock", "corpus.lock"),
        profiles=profiles,
    )
    if not plan.corpus.is_dir():
        raise plan.error("corpus.path", "not a folder")
    for entry in profiles:
        if not entry.profile.is_file():
            raise plan.error(f"{entry.field}.profile", "no such profile file")
        if entry.extension is not None and not entry.extension.exists():
            raise plan.error(f"{entry.field}.extension", "no such extension manifest")
        for i, folder in enumerate(entry.path_prepend):
            if not folder.is_dir():
                raise plan.error(f"{entry.field}.path_prepend[{i}]", "not a folder")
    return plan


def load_queries(plan: Plan) -> tuple[Query, ...]:
    """``{query_id, query, query_summary}`` per line; ids unique, bounds as for `dcx recall`."""
    shown = plan.shown(plan.queries_path)
    lines = _read_lines(plan, plan.queries_path, "queries")
    out: list[Query] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{shown}, line {number}"
        try:
            row = json.loads(line)
        except ValueError:
            raise InvalidInput(f"{where}: not a JSON object", code="invalid_queries") from None
        if not isinstance(row, dict):
            raise InvalidInput(f"{where}: not a JSON object", code="invalid_queries")
        unknown = sorted(set(row) - {"query_id", "query", "query_summary"})
        missing = sorted({"query_id", "query", "query_summary"} - set(row))
        if unknown or missing:
            what = (
                f"unknown field(s): {', '.join(unknown)}"
                if unknown
                else f"missing field(s): {', '.join(missing)}"
            )
            raise InvalidInput(
                f"{where}: {what}", code="unknown_field" if unknown else "missing_field"
            )
        try:
            qid = public.check_token(row["query_id"], field="query_id", limit=64)
            summary = public.check_text(
                row["query_summary"], field="query_summary", limit=public.SUMMARY_MAX
            )
        except DcxError as exc:
            raise InvalidInput(f"{where}: {exc.message}", code=exc.code) from None
        query = row["query"]
        if not isinstance(query, str) or not query.strip() or len(query) > 1000 or "\n" in query:
            raise InvalidInput(
                f"{where}: query: expected one line of 1..1000 characters", code="invalid_queries"
            )
        if qid in seen:
            raise InvalidInput(
                f"{where}: duplicate query_id {qid!r} (first on line {seen[qid]})",
                code="duplicate_id",
            )
        seen[qid] = number
        out.append(Query(qid, query, summary))
    if not out:
        raise InvalidInput(f"{shown}: holds no query", code="invalid_queries")
    if len(out) > MAX_QUERIES:
        raise InvalidInput(
            f"{shown}: {len(out)} queries is over the limit of {MAX_QUERIES}",
            code="invalid_queries",
        )
    return tuple(out)


def load_qrels(
    plan: Plan, queries: tuple[Query, ...], docids: set[str]
) -> dict[str, dict[str, int]]:
    """TREC qrels ``qid iter docid relevance``; every qid and docid must be known."""
    shown = plan.shown(plan.qrels_path)
    known = {q.query_id for q in queries}
    out: dict[str, dict[str, int]] = {}
    for number, line in enumerate(_read_lines(plan, plan.qrels_path, "qrels"), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{shown}, line {number}"
        parts = line.split()
        if len(parts) != 4:
            raise InvalidInput(
                f"{where}: expected 'query_id 0 docid relevance'", code="invalid_qrels"
            )
        qid, _iteration, docid, grade = parts
        if qid not in known:
            raise InvalidInput(
                f"{where}: unknown query {qid!r} (not in {plan.shown(plan.queries_path)})",
                code="unknown_query",
            )
        if docid not in docids:
            granularity = (
                "path#heading-slug"
                if plan.granularity == "section"
                else "a path relative to corpus.path"
            )
            raise InvalidInput(
                f"{where}: unknown document {docid!r} (a docid is {granularity})",
                code="unknown_document",
            )
        if not grade.isdigit() or int(grade) > 100:
            raise InvalidInput(
                f"{where}: relevance must be an integer 0..100", code="invalid_qrels"
            )
        if docid in out.get(qid, {}):
            raise InvalidInput(f"{where}: {qid} {docid} is judged twice", code="duplicate_id")
        out.setdefault(qid, {})[docid] = int(grade)
    return out


def _read_lines(plan: Plan, path: Path, field: str) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise plan.error(field, f"{plan.shown(path)}: no such file") from None
    except (OSError, UnicodeDecodeError):
        raise plan.error(field, f"{plan.shown(path)}: cannot read it as UTF-8 text") from None
