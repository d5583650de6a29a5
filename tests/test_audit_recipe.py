"""The audit recipe of docs/audit-recipe.md keeps its promises.

The recipe's code is read from the page (its blocks fenced as ```python recipe), so the code
readers copy is the code tested here: one trace id per run, model and tool time apart, the trace
closed on every path, argument digests instead of arguments, the tenant in the system prompt,
and a final-answer guard that leaves tool arguments alone.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sys
import threading
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import interrupt

from graphagent import create_agent, explain
from graphagent.middleware import AgentMiddleware, FinalAnswerFilterMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import Run, run_agent

PAGE = Path(__file__).resolve().parent.parent / "docs" / "audit-recipe.md"
RECIPE_BLOCK = re.compile(r"^```python recipe\n(.*?)^```", re.S | re.M)


def _load_recipe() -> types.ModuleType:
    blocks = RECIPE_BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) == 5, f"{PAGE.name} should hold 5 recipe blocks, found {len(blocks)}"
    module = types.ModuleType("audit_recipe")
    sys.modules.setdefault(module.__name__, module)  # dataclasses look their module up
    exec(compile("\n\n".join(blocks), str(PAGE), "exec"), module.__dict__)
    return module


recipe = _load_recipe()
RequestContext = recipe.RequestContext

PHONE = "13812345678"
WIKI = "https://wiki.corp.example/projects/1001"
PROMPT = "You are the assistant of a project portal."
ACME = RequestContext("t-1001", "Acme Studio", trace_id="req-1")


class FakeClock:
    """Stands in for time.perf_counter: time passes only when the model or a tool spends it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def spend(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Service:
    agent: Any
    model: ScriptedChatModel
    log: list[Any]

    def events(self) -> list[str]:
        return [record.event for record in self.log]

    def records(self, event: str) -> list[Any]:
        return [record for record in self.log if record.event == event]


def business_tools(clock: FakeClock) -> list[BaseTool]:
    """The service's tools: none of them knows about traces, timers or tenants."""

    @tool
    def find_owner(project_id: str) -> str:
        """Find who owns a project, and its wiki page."""
        clock.spend(0.006)
        return f"Project {project_id}: owner Li Lei, phone {PHONE}, page {WIKI}"

    @tool
    def send_sms(phone: str, text: str) -> str:
        """Send a text message."""
        clock.spend(0.09)
        return f"sent to {phone}"

    @tool
    def set_theme(project_id: str, color: str) -> str:
        """Change a project's theme colour."""
        clock.spend(0.03)
        raise ConnectionError("configuration service unreachable")

    return [find_owner, send_sms, set_theme]


def after(clock: FakeClock, seconds: float, reply: str | AIMessage) -> Callable[..., Any]:
    def answer(messages: list[BaseMessage]) -> str | AIMessage:
        clock.spend(seconds)
        return reply

    return answer


def the_chain(log: list[Any], clock: Callable[[], float] | None = None) -> list[AgentMiddleware]:
    """The recipe's five pieces, listed out of order on purpose: ``order`` nests them."""
    trace_run = recipe.TraceRun(log.append, clock=clock) if clock else recipe.TraceRun(log.append)
    guard, prompt = recipe.AnswerGuard(), recipe.tenant_prompt
    return [recipe.ToolAudit(), recipe.ModelTimer(), prompt, guard, trace_run]


def service(
    replies: list[Any],
    *,
    clock: FakeClock | None = None,
    tools: Iterable[BaseTool] | None = None,
    extra: Iterable[AgentMiddleware] = (),
    **kwargs: Any,
) -> Service:
    clock = clock or FakeClock()
    log: list[Any] = []
    model = ScriptedChatModel(replies, repeat_last=kwargs.pop("repeat_last", False))
    agent = create_agent(
        model,
        list(tools) if tools is not None else business_tools(clock),
        system_prompt=kwargs.pop("system_prompt", PROMPT),
        context_schema=RequestContext,
        middleware=[*extra, *the_chain(log, clock)],
        **kwargs,
    )
    return Service(agent, model, log)


def ask(text: str) -> dict[str, Any]:
    return {"messages": [("user", text)]}


def owner_question(clock: FakeClock | None = None) -> list[Any]:
    clock = clock or FakeClock()
    return [
        after(clock, 0.8, calls(("find_owner", {"project_id": "1001"}))),
        after(clock, 0.12, f"Li Lei: call {PHONE}, or see {WIKI}."),
    ]


def expected_digest(args: dict[str, Any]) -> str:
    """Computed here independently: SHA-256 of sorted, compact JSON, 12 hex digits."""
    canonical = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:12]


# -- one trace id ----------------------------------------------------------------------------------


def test_every_record_of_a_run_carries_the_run_s_one_trace_id(run: Run) -> None:
    svc = service(owner_question())

    run(svc.agent, ask("Who owns project 1001?"), context=ACME)

    assert svc.events() == [
        "trace.start",
        "prompt.tenant",
        "model.call",
        "tool.call",
        "prompt.tenant",
        "model.call",
        "answer.guard",
        "trace.end",
    ]
    assert {record.trace_id for record in svc.log} == {"req-1"}


def test_without_an_incoming_trace_id_each_run_gets_a_new_one(how_call: str) -> None:
    svc = service(["Hello."], repeat_last=True)
    anonymous = RequestContext("t-1001", "Acme Studio")

    for _ in range(2):
        run_agent(svc.agent, how_call, ask("Hi"), context=anonymous)

    traces = _by_trace(svc.log)
    assert len(traces) == 2
    for trace_id, records in traces.items():
        assert re.fullmatch(r"[0-9a-f]{16}", trace_id)
        assert [r.event for r in records] == [
            "trace.start",
            "prompt.tenant",
            "model.call",
            "trace.end",
        ]


def _by_trace(log: list[Any]) -> dict[str, list[Any]]:
    traces: dict[str, list[Any]] = {}
    for record in log:
        traces.setdefault(record.trace_id, []).append(record)
    return traces


def _assert_two_separate_traces(log: list[Any]) -> None:
    traces = _by_trace(log)
    assert len(traces) == 2
    by_tenant = {}
    for records in traces.values():
        tenants = {r.fields["tenant"] for r in records if "tenant" in r.fields}
        assert len(tenants) == 1, tenants
        (tenant,) = tenants
        by_tenant[tenant] = records
        assert records[0].event == "trace.start"
        assert records[-1].event == "trace.end"
        assert records[-1].fields["status"] == "ok"
    project = {"t-1001": "1001", "t-2002": "2002"}
    for tenant, records in by_tenant.items():
        (tool_call,) = (r for r in records if r.event == "tool.call")
        assert tool_call.fields["args"] == expected_digest({"project_id": project[tenant]})


def _owner_flow(messages: list[BaseMessage]) -> str | AIMessage:
    if messages[-1].type == "tool":
        return "The owner is Li Lei."
    project = "1001" if "1001" in messages[-1].text else "2002"
    return calls(("find_owner", {"project_id": project}))


def test_two_concurrent_async_runs_keep_their_own_trace_ids() -> None:
    async def main() -> list[Any]:
        both_inside = asyncio.Barrier(2)

        @tool
        async def find_owner(project_id: str) -> str:
            """Find who owns a project."""
            async with asyncio.timeout(5):
                await both_inside.wait()  # both runs are in a tool call at the same time
            return "Li Lei"

        svc = service([_owner_flow], tools=[find_owner], repeat_last=True)
        await asyncio.gather(
            svc.agent.ainvoke(ask("Owner of 1001?"), context=RequestContext("t-1001", "Acme")),
            svc.agent.ainvoke(ask("Owner of 2002?"), context=RequestContext("t-2002", "Globex")),
        )
        return svc.log

    _assert_two_separate_traces(asyncio.run(main()))


def test_two_concurrent_threaded_runs_keep_their_own_trace_ids() -> None:
    both_inside = threading.Barrier(2, timeout=5)

    @tool
    def find_owner(project_id: str) -> str:
        """Find who owns a project."""
        both_inside.wait()
        return "Li Lei"

    svc = service([_owner_flow], tools=[find_owner], repeat_last=True)
    requests = [("Owner of 1001?", "t-1001"), ("Owner of 2002?", "t-2002")]
    errors: list[BaseException] = []

    def handle(question: str, tenant: str) -> None:
        try:
            svc.agent.invoke(ask(question), context=RequestContext(tenant, tenant))
        except BaseException as error:  # surfaced below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=handle, args=request) for request in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert not errors
    _assert_two_separate_traces(svc.log)


# -- model time and tool time ----------------------------------------------------------------------


def test_model_time_and_tool_time_are_recorded_apart(how_call: str) -> None:
    clock = FakeClock()
    svc = service(owner_question(clock), clock=clock)

    run_agent(svc.agent, how_call, ask("Who owns project 1001?"), context=ACME)

    models = svc.records("model.call")
    assert [(r.fields["call"], r.fields["ms"]) for r in models] == [(1, 800), (2, 120)]
    assert [r.fields["ms"] for r in svc.records("tool.call")] == [6]
    (end,) = svc.records("trace.end")
    assert (end.fields["model_ms"], end.fields["tool_ms"], end.fields["ms"]) == (920, 6, 926)
    # The tool ran between the two model calls, and neither record covers the other.
    assert svc.events().index("tool.call") == svc.events().index("model.call") + 1


def test_the_timer_sits_inside_a_retry_and_records_each_attempt(how_call: str) -> None:
    clock = FakeClock()

    def timeout(messages: list[BaseMessage]) -> str:
        clock.spend(2.0)
        raise TimeoutError("provider timed out")

    class RetryOnce(AgentMiddleware):  # default order 0: between the prompt and the timer
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            try:
                return handler(request)
            except TimeoutError:
                return handler(request)

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            try:
                return await handler(request)
            except TimeoutError:
                return await handler(request)

    svc = service([timeout, after(clock, 0.5, "Hello.")], clock=clock, extra=[RetryOnce()])

    run_agent(svc.agent, how_call, ask("Hi"), context=ACME)

    attempts = [(r.fields["status"], r.fields["ms"]) for r in svc.records("model.call")]
    assert attempts == [("error:TimeoutError", 2000), ("ok", 500)]
    assert svc.records("trace.end")[0].fields["status"] == "ok"
    assert len(svc.records("prompt.tenant")) == 1  # the prompt is built once, outside the retry


# -- the trace closes on every path ----------------------------------------------------------------


def test_a_raising_tool_closes_the_trace_with_its_error_type(run: Run) -> None:
    clock = FakeClock()
    change = calls(("set_theme", {"project_id": "1001", "color": "teal"}))
    svc = service([after(clock, 0.7, change)], clock=clock)

    with pytest.raises(ConnectionError, match="configuration service unreachable"):
        run(svc.agent, ask("Make project 1001 teal."), context=ACME)

    assert svc.events() == ["trace.start", "prompt.tenant", "model.call", "tool.call", "trace.end"]
    tool_call, end = svc.log[-2:]
    assert (tool_call.fields["status"], tool_call.fields["ms"]) == ("error:ConnectionError", 30)
    assert dict(end.fields) == {
        "status": "error:ConnectionError",
        "ms": 730,
        "model_ms": 700,
        "tool_ms": 30,
    }


def test_a_raising_model_closes_the_trace_with_its_error_type(how_call: str) -> None:
    def broken(messages: list[BaseMessage]) -> str:
        raise PermissionError("API key revoked")

    svc = service([broken])

    with pytest.raises(PermissionError):
        run_agent(svc.agent, how_call, ask("Hi"), context=ACME)

    assert svc.events() == ["trace.start", "prompt.tenant", "model.call", "trace.end"]
    assert svc.log[-2].fields["status"] == svc.log[-1].fields["status"] == "error:PermissionError"


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_a_stream_closed_early_closes_the_trace(how: str) -> None:
    svc = service(owner_question())
    inputs, kwargs = ask("Who owns project 1001?"), {"context": ACME, "stream_mode": "updates"}

    if how == "stream":
        stream = svc.agent.stream(inputs, **kwargs)
        next(stream)
        stream.close()
    else:

        async def read_one_then_close() -> None:
            stream = svc.agent.astream(inputs, **kwargs)
            await anext(stream)
            await stream.aclose()

        asyncio.run(read_one_then_close())

    assert svc.events()[-1] == "trace.end"
    assert svc.log[-1].fields["status"] == "closed"


def test_an_interrupt_is_recorded_as_a_pause_not_an_error(how_call: str) -> None:
    @tool
    def confirm(question: str) -> str:
        """Ask the user to confirm."""
        return str(interrupt(question))

    svc = service(
        [calls(("confirm", {"question": "Really?"})), "Done."],
        tools=[confirm],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t1"}}

    output = run_agent(svc.agent, how_call, ask("Do it."), context=ACME, config=config)

    assert "__interrupt__" in output
    assert [r.fields["status"] for r in svc.records("tool.call")] == ["interrupted"]
    assert svc.records("trace.end")[0].fields["status"] == "interrupted"


def test_an_error_tool_message_is_audited_as_a_failed_call(how_call: str) -> None:
    svc = service([calls(("find_owner", {"project": "1001"})), "Sorry."])  # wrong argument name

    result = run_agent(svc.agent, how_call, ask("Who owns 1001?"), context=ACME)

    assert [m.status for m in result["messages"] if isinstance(m, ToolMessage)] == ["error"]
    assert svc.records("tool.call")[0].fields["status"] == "error:ToolMessage"
    assert svc.records("trace.end")[0].fields["status"] == "ok"


# -- the tool audit --------------------------------------------------------------------------------


def test_the_tool_audit_holds_a_digest_and_never_the_arguments(how_call: str) -> None:
    args = {"phone": PHONE, "text": "Please call back."}
    svc = service([calls(("send_sms", args)), "Texted."])

    run_agent(svc.agent, how_call, ask("Text the owner."), context=ACME)

    (record,) = svc.records("tool.call")
    assert record.fields["args"] == expected_digest(args)
    assert record.fields["args"] == recipe.args_digest(dict(reversed(args.items())))
    written = "\n".join(f"{r} {dict(r.fields)!r}" for r in svc.log)
    assert PHONE not in written
    assert "Please call back" not in written


# -- the tenant in the system prompt ---------------------------------------------------------------


def test_the_tenant_reaches_the_system_message_of_every_model_call(how_call: str) -> None:
    svc = service(owner_question())

    run_agent(svc.agent, how_call, ask("Who owns project 1001?"), context=ACME)

    expected = f"{PROMPT}\n\nYou answer for Acme Studio. Never mention other companies."
    assert len(svc.model.calls) == 2
    for call in svc.model.calls:
        assert isinstance(call.messages[0], SystemMessage)
        assert call.messages[0].text == expected
    assert [r.fields["tenant"] for r in svc.records("prompt.tenant")] == ["t-1001", "t-1001"]


def test_without_a_system_prompt_the_tenant_rule_is_the_prompt(how_call: str) -> None:
    svc = service(["Hello."], system_prompt=None)
    globex = RequestContext("t-2002", "Globex")

    run_agent(svc.agent, how_call, ask("Hi"), context=globex)

    system = svc.model.calls[0].messages[0]
    assert system.text == "You answer for Globex. Never mention other companies."


# -- the final-answer guard ------------------------------------------------------------------------


def test_the_final_answer_is_masked_and_the_tools_get_the_real_arguments(run: Run) -> None:
    args = {"phone": PHONE, "text": "Please call back."}
    svc = service(
        [
            calls(("send_sms", args), text=f"Texting {PHONE} now."),
            f"Done: I texted {PHONE}; notes at {WIKI}.",
        ]
    )

    result = run(svc.agent, ask("Text the owner of 1001."), context=ACME)

    request, tool_result, answer = result["messages"][1:]
    assert answer.text == "Done: I texted [phone]; notes at [internal link]."
    assert request.tool_calls[0]["args"] == args  # the tool-calling round is left alone
    assert request.text == f"Texting {PHONE} now."
    assert tool_result.text == f"sent to {PHONE}"  # the tool got the real number
    assert svc.model.calls[1].messages[2].tool_calls[0]["args"] == args
    (guard,) = svc.records("answer.guard")
    assert dict(guard.fields) == {"masked": "phone:1,internal_link:1"}


def test_an_answer_with_nothing_to_mask_is_left_as_it_is(how_call: str) -> None:
    svc = service(["Li Lei owns it."])

    result = run_agent(svc.agent, how_call, ask("Who owns 1001?"), context=ACME)

    assert result["messages"][-1].text == "Li Lei owns it."
    assert svc.records("answer.guard") == []


def test_text_blocks_of_a_list_content_answer_are_masked(how_call: str) -> None:
    reply = AIMessage([{"type": "text", "text": f"Call {PHONE}."}, {"type": "image", "url": WIKI}])
    svc = service([reply])

    result = run_agent(svc.agent, how_call, ask("Phone?"), context=ACME)

    assert result["messages"][-1].content == [
        {"type": "text", "text": "Call [phone]."},
        {"type": "image", "url": WIKI},  # not text: left alone
    ]


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (f"call {PHONE}.", "call [phone]."),
        ("call +49 30 1234567 today", "call [phone] today"),
        ("order 138123456789 shipped", "order 138123456789 shipped"),  # 12 digits: no mobile
        ("due 2024-05-01", "due 2024-05-01"),
        (f"see {WIKI}.", "see [internal link]."),
        ("see (https://corp.example:8443/a?b=1)", "see ([internal link])"),
        ("see https://corp.example.", "see [internal link]."),
        ("see https://example.com/x", "see https://example.com/x"),
        ("see https://notcorp.example/x", "see https://notcorp.example/x"),
        ("see https://corp.example.evil.com/x", "see https://corp.example.evil.com/x"),
    ],
)
def test_what_the_guard_masks(text: str, masked: str) -> None:
    assert recipe.mask(text, recipe.Counter()) == masked


def _streamed_model_text(agent: Any, how: str) -> str:
    kwargs = {"context": ACME, "stream_mode": "messages"}
    if how == "stream":
        chunks = list(agent.stream(ask("Who owns 1001?"), **kwargs))
    else:

        async def collect() -> list[Any]:
            return [chunk async for chunk in agent.astream(ask("Who owns 1001?"), **kwargs)]

        chunks = asyncio.run(collect())
    return "".join(c.text for c, meta in chunks if meta["langgraph_node"] == "model")


@pytest.mark.parametrize("how", ["stream", "astream"])
def test_with_tokens_held_back_the_stream_shows_only_the_masked_answer(how: str) -> None:
    hold_tokens = FinalAnswerFilterMiddleware()
    hold_tokens.order = 25
    held = service(owner_question(), extra=[hold_tokens])
    raw = service(owner_question())

    assert _streamed_model_text(held.agent, how) == "Li Lei: call [phone], or see [internal link]."
    assert PHONE in _streamed_model_text(raw.agent, how)  # the tokens leave before the guard


# -- the chain -------------------------------------------------------------------------------------


def _chain_lines(middleware: list[AgentMiddleware]) -> list[str]:
    agent = create_agent(ScriptedChatModel([]), business_tools(FakeClock()), middleware=middleware)
    return [line.strip() for line in str(explain(agent)).splitlines() if line.startswith("  wrap")]


def test_order_nests_the_chain_whatever_the_list_order() -> None:
    chain = the_chain([])

    assert (
        _chain_lines(chain)
        == _chain_lines(chain[::-1])
        == [
            "wrap_agent       TraceRun",
            "wrap_model_call  AnswerGuard ⊃ tenant_prompt ⊃ ModelTimer",
            "wrap_tool_call   ToolAudit",
        ]
    )


def test_the_stages_need_an_open_trace_and_a_request_context(how_call: str) -> None:
    without_trace = create_agent(ScriptedChatModel(["Hi"]), middleware=[recipe.ModelTimer()])
    with pytest.raises(LookupError, match=r"add TraceRun\(\.\.\.\)"):
        run_agent(without_trace, how_call, ask("Hi"))

    svc = service(["Hi"])
    with pytest.raises(TypeError, match=r"context=RequestContext\(\.\.\.\)"):
        run_agent(svc.agent, how_call, ask("Hi"))
    assert svc.log == []
