from tests.conftest import Repo


def test_preflight_runs_on_a_fresh_repository(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"a.txt": "hello\n"})
    run = repo.tools("--format", "json", "preflight", "--gate", "conflicts")
    assert run.exit_code == 0, run.stderr
    assert run.json()["gates"][0]["gate"] == "conflicts"
