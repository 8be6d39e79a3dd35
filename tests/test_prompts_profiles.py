"""Prompt profiles: the short text for small models, chosen by the served model's name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aw_lookahead.errors import ConfigError
from aw_lookahead.prompts import (
    EMBEDDED_SERVED_NAME,
    PromptSet,
    embedded_prompt_profile,
    profile_for_model,
    prompts_for_model,
    render_messages,
)
from aw_lookahead.prompts import profiles as profiles_module
from aw_lookahead.trajectory import Domain, Trajectory
from aw_lookahead.worldmodel import OpenAIWorldModel


def test_short_profile_is_a_fraction_of_the_standard_text_and_keeps_the_contract() -> None:
    short, standard = PromptSet(profile="short"), PromptSet()
    for domain in ("terminal", "mcp"):
        s, f = short.system(domain, tools=[{"name": "read_file"}]), standard.system(domain)
        assert len(s) * 3 < len(f)
        assert "<predicted_observation>" in s
    assert "Tools on this server: read_file." in short.system("mcp", tools=[{"name": "read_file"}])
    # domains without a short text keep the standard one
    assert short.system(Domain.WEB) == standard.system(Domain.WEB)
    traj = Trajectory(domain="mcp", tools=[{"name": "read_file", "description": "Read."}])
    last = render_messages(traj, {"name": "read_file", "arguments": {}}, prompts=short)[-1]
    assert "**Tool Definition:**" in last["content"]


def test_an_unknown_profile_is_refused_with_the_choices() -> None:
    with pytest.raises(ConfigError, match="standard, short"):
        PromptSet(profile="tiny")  # type: ignore[arg-type]


def test_the_embedded_model_follows_its_shipped_provenance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = embedded_prompt_profile()
    assert profile_for_model(EMBEDDED_SERVED_NAME) == shipped
    assert profile_for_model(f"/cache/models/{EMBEDDED_SERVED_NAME}") == shipped
    assert profile_for_model("Qwen/Qwen-AgentWorld-35B-A3B") == "standard"
    assert profile_for_model(None) == "standard"
    provenance = tmp_path / "provenance.json"
    provenance.write_text(json.dumps({"prompt_profile": "short"}))
    monkeypatch.setattr(profiles_module, "_PROVENANCE", provenance)
    embedded_prompt_profile.cache_clear()
    try:
        assert prompts_for_model(EMBEDDED_SERVED_NAME).profile == "short"
        assert OpenAIWorldModel(EMBEDDED_SERVED_NAME).prompts.profile == "short"
        assert OpenAIWorldModel("other-model").prompts.profile == "standard"
        explicit = PromptSet()
        assert OpenAIWorldModel(EMBEDDED_SERVED_NAME, prompts=explicit).prompts is explicit
        provenance.write_text("{not json")
        embedded_prompt_profile.cache_clear()
        assert embedded_prompt_profile() == "standard"
    finally:
        embedded_prompt_profile.cache_clear()


def test_the_profile_reads_the_shipped_adapters_provenance() -> None:
    from aw_lookahead.embedded.lora import PACKAGED_ADAPTER_DIR

    assert profiles_module._PROVENANCE == PACKAGED_ADAPTER_DIR / "provenance.json"
    assert profiles_module._PROVENANCE.is_file()
