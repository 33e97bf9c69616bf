"""One valid instance of every pipeline record kind, small but with every nested model populated."""

from __future__ import annotations

from envscaler_core.models import (
    AcceptedEnv,
    BFCLEvalReport,
    BFCLTaskResult,
    CheckAudit,
    CheckResult,
    CheckSpec,
    Entity,
    EnvCandidate,
    EnvSpec,
    EnvTopic,
    ImportedEnv,
    ImportedScenario,
    Operation,
    Record,
    Scenario,
    SourceTask,
    StageFailure,
    SubsetScore,
    TokenUsage,
    ToolCall,
    ToolFunction,
    ToolSchema,
    Trajectory,
    ValidationRound,
)

CODE = "class Library:\n    def __init__(self):\n        self.books = {}\n"
TOOL = ToolSchema(
    function=ToolFunction(
        name="add_book",
        description="Add a book.",
        parameters={"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
    )
)


def source_task(i: int = 0, **update: object) -> SourceTask:
    return SourceTask(text=f"Borrow book number {i}", dataset="jsonl", origin=f"tasks.jsonl:#{i}").model_copy(update=update)


def every_kind() -> list[Record]:
    task = source_task(stateful=True, judge_reason="changes a loan")
    topic = EnvTopic(
        summary="Library loans", introduction="Books, members and loans.", usefulness=8, modelability=9,
        example_task=task.text, source_task_fp=task.fingerprint, embedding=[0.25, -1.5, 3.0e-7], selected=True,
    )
    spec = EnvSpec(
        topic_fp=topic.fingerprint, summary=topic.summary, introduction=topic.introduction,
        entities=[Entity(name="Book", attributes=["title", "isbn"])], rules=["A book has one borrower."],
        operations=[Operation(name="add_book", description="Add a book.", kind="state_change")],
    )
    candidate = EnvCandidate(
        topic_fp=topic.fingerprint, spec_fp=spec.fingerprint, class_name="Library", class_code=CODE,
        tools=[TOOL], tool_kinds={"add_book": "state_change"}, status="accepted",
    )
    round_ = ValidationRound(
        candidate_fp=candidate.fingerprint, mode="llm", index=0, tool="add_book", args={"title": "Dune"},
        case_type="positive", observation={"ok": True}, state_after={"books": {"Dune": {}}},
        state_diff={"books": {"added": ["Dune"]}}, verdict="pass", reason="added", elapsed_ms=1.5,
    )
    env = AcceptedEnv(
        env_id="env_" + candidate.fingerprint[:12], candidate_fp=candidate.fingerprint, summary=topic.summary,
        introduction=topic.introduction, rules=spec.rules, class_name="Library", class_code=CODE, tools=[TOOL],
        tool_kinds={"add_book": "state_change"}, score=0.9, validation_mode="both",
    )
    scenario = Scenario(
        env_id=env.env_id, initial_state={"books": {}}, task="Add Dune.", checklist=["Dune exists"],
        checks=[CheckSpec(item="Dune exists", code="def check_func(final_state):\n    return 'Dune' in final_state['books']")],
        reference_solution=[ToolCall(tool="add_book", args={"title": "Dune"})], status="verified",
    )
    trajectory = Trajectory(
        scenario_fp=scenario.fingerprint, env_id=env.env_id, mode="non_conversational", agent_model="gpt-4.1-mini",
        messages=[{"role": "user", "content": "Add Dune."}, {"role": "assistant", "content": "Done."}], tools=[TOOL],
        steps=1, termination="agent_done", final_state={"books": {"Dune": {}}},
        check_results=[CheckResult(item="Dune exists", passed=True)], reward=1.0, all_passed=True,
        usage=TokenUsage(prompt_tokens=12, completion_tokens=3),
    )
    failure = StageFailure(stage="validate", item_fp=candidate.fingerprint, attempts=2, reason="timeout in add_book")
    imported_env = ImportedEnv(  # EnvScaler interop: the record verbatim (as JSON text) and its verdict
        env_id="env_1", position=0, source="env_metadata.json[env_1]", class_name="Library", candidate_fp=candidate.fingerprint,
        record_json='{"env_id":"env_1","env_class_name":"Library","tools":[]}', status="rejected", reasons=["no tools"])
    imported_scenario = ImportedScenario(
        split="rl", position=0, source="rl.json[0]", env_id="env_1", task_id="0915-142233",
        record_json='{"env_id":"env_1","task":"Add Dune.","init_config":{"s":{"__type__":"set","items":[1]}}}',
        audit="verified", checks=[CheckAudit(index=0, item="Dune exists", outcome="verified", on_initial=False, on_solved=True)],
        reference_solution=[ToolCall(tool="add_book", args={"title": "Dune"})], solution_origin="file")
    bfcl_result = BFCLTaskResult(
        task_id="multi_turn_base_0", subset="base", agent="llm", model="gpt-4.1-mini", valid=False,
        error_type="multi_turn:instance_state_mismatch", error_message="state differs", details={"differences": {}},
        turns=1, steps=2, tool_calls=1, decoded=[[["ls(a=True)"]]],
        messages=[{"role": "user", "content": "List."}, {"role": "assistant", "content": "Done."}],
        usage=TokenUsage(prompt_tokens=5, completion_tokens=1), elapsed_s=0.25,
    )
    bfcl_report = BFCLEvalReport(agent="llm", model="gpt-4.1-mini", complete=True, overall=0.0,
                                 subsets={"base": SubsetScore(tasks=1, valid=0, accuracy=0.0)})
    return [task, topic, spec, candidate, round_, env, scenario, trajectory, failure, bfcl_result, bfcl_report,
            imported_env, imported_scenario]
