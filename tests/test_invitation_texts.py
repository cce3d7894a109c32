"""What an invitation draft tells the rater: by when, to whom, and in what order."""

from __future__ import annotations

from mail_helpers import mail_study, packs, parsed, run

from sheetflow.packs.mail import build_eml, compose_eml
from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study
from sheetflow.workbook import layout as L


def _body(content: bytes) -> str:
    return parsed(content).get_body(("plain",)).get_content().replace("\r\n", "\n")


def _invitation(root, sitting: int = 1) -> str:
    study = load_study(root)
    head = next(p for p in packs(root) if p["sitting"] == sitting)
    rater = next(r for r in study.raters if r.id == head["rater_id"])
    return _body(build_eml(study, rater, root / L.PACKS_DIR / head["file"], sitting))


def test_the_default_invitation_says_by_when_and_is_signed_by_the_sender(tmp_path):
    """The invitation never said by when, nor who the workbook goes back to: the
    [mail] deadline only marked packs overdue, and the drafts ended unsigned."""
    root = mail_study(tmp_path / "s", "answer-review", "deadline = 2026-10-15\n")
    text = _invitation(root)
    assert "send it back by Thursday 15 October 2026" in text
    assert text.rstrip().endswith("Study Desk\ndesk@example.org")


def test_a_body_says_the_deadline_where_it_writes_the_placeholder(tmp_path):
    root = mail_study(tmp_path / "s", "keep-known", "deadline = 2026-10-02\n")
    spec = root / "study.toml"
    spec.write_text(spec.read_text().replace("send it back as", "send it back by {deadline} as"))
    text = _invitation(root)
    assert "send it back by Friday 2 October 2026 as" in text and "{deadline}" not in text


def test_a_body_using_the_deadline_without_one_is_refused(tmp_path):
    """No date to put there: check says so in one line, naming both tables."""
    root = tmp_path / "s"
    init_study(root, "keep-known")
    spec = root / "study.toml"
    spec.write_text(spec.read_text().replace("send it back as", "send it back by {deadline} as"))
    result = run("check", str(root))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert ("[email]: 'body' uses {deadline} but [mail] sets no deadline; add "
            "'deadline = yyyy-mm-dd' to [mail], or take {deadline} out") in result.stderr


def test_check_warns_of_a_deadline_the_own_body_does_not_say(tmp_path):
    """A deadline added to [mail] as README shows never reached the invitations of a
    template whose own [email] body has no {deadline}, and check said nothing."""
    root = tmp_path / "s"
    init_study(root, "keep-known")
    spec = root / "study.toml"
    spec.write_text(spec.read_text() + "\n[mail]\ndeadline = 2026-10-02\n")
    result = run("check", str(root))
    assert result.exit_code == 0, result.output
    warned = [ln for ln in result.stderr.splitlines() if "[mail] deadline" in ln]
    assert warned == [f"warning: {spec}: [mail] deadline = 2026-10-02 is set, but the "
                      "[email] body does not say {deadline}, so the invitations will not "
                      "state it (the reminders do): add it to the body, e.g. \"Please "
                      "send it back by {deadline}.\""]
    spec.write_text(spec.read_text().replace("send it back as", "send it back by {deadline} as"))
    assert "[mail] deadline" not in run("check", str(root)).stderr


def test_sending_invitations_after_the_deadline_warns(tmp_path):
    """Invitations sent after the [mail] deadline went without a word, and status then
    marked every pack overdue."""
    root = mail_study(tmp_path / "s", "answer-review", "deadline = 2020-10-15\n")
    result = run("send", str(root), "invitations", "--dry-run")
    assert result.exit_code == 0, result.output
    warned = [ln for ln in result.stderr.splitlines() if "deadline" in ln]
    assert len(warned) == 1 and warned[0].startswith(
        f"warning: {root / 'study.toml'}: the [mail] deadline 2020-10-15 has passed "
        "(today is "), warned
    assert warned[0].endswith("status marks every pack not back as overdue: set a new "
                              "deadline = yyyy-mm-dd in [mail]")
    spec = root / "study.toml"
    spec.write_text(spec.read_text().replace("2020-10-15", "2999-10-15"))
    assert "deadline" not in run("send", str(root), "invitations", "--dry-run").stderr


def test_the_sitting_2_note_follows_the_greeting(tmp_path):
    root = mail_study(tmp_path / "s", "keep-known")
    text = _invitation(root, sitting=2)
    greeting, note = text.split("\n\n")[:2]
    assert greeting.startswith("Hello ") and greeting.endswith(",")
    assert note.startswith("This is your SECOND-SITTING workbook.")


def test_reminders_and_replies_are_signed_once(tmp_path):
    """Replies and reminders (texts given to compose_eml) end "send it back to me": the
    sender's name says who "me" is; a text signed already is not signed twice."""
    root = mail_study(tmp_path / "s", "answer-review")
    study = load_study(root)
    rater = study.raters[0]
    pack = root / L.PACKS_DIR / packs(root)[0]["file"]
    given = compose_eml(study, rater, pack, subject="s", body="Please send it back to me.\n")
    assert _body(given.message) == ("Please send it back to me.\n\nStudy Desk\n"
                                    "desk@example.org\n")
    signed = compose_eml(study, rater, pack, subject="s", body="Thanks,\nStudy Desk\n")
    assert _body(signed.message) == "Thanks,\nStudy Desk\n"


def test_without_a_sender_the_draft_says_reply_and_signs_nothing(tmp_path):
    root = tmp_path / "s"
    init_study(root, "answer-review")
    from sheetflow.packs.generate import generate_packs

    generate_packs(root)
    text = _invitation(root)
    assert "as an attachment to a reply to this e-mail." in text
    assert text.rstrip().endswith("Thank you!")


def _five_items(root) -> None:
    """The template's items file (and its internal scores) cut to its first five items."""
    import csv

    path = root / "items.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows[:6])
    kept = {row[0] for row in rows[1:6]}
    scores = root / "internal_scores.csv"
    with scores.open(encoding="utf-8", newline="") as fh:
        lines = list(csv.reader(fh))
    with scores.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([lines[0], *(r for r in lines[1:] if r[0] in kept)])


def test_the_template_tells_a_study_of_five_items_five_cases(tmp_path):
    """The paired-rubric template said "all 18 test cases" (its own sample's count) in
    the invitation and the instructions, whatever the study made from it holds."""
    import email
    import email.policy

    import openpyxl
    from mail_servers import smtp_server

    from sheetflow.packs.generate import generate_packs

    root = init_study(tmp_path / "s", "paired-rubric")
    _five_items(root)
    with (root / "study.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[mail]\nfrom = "Study Desk <desk@example.org>"\n')
    generate_packs(root, emails=True)
    head = packs(root)[0]
    assert len(head["cards"]) == 5
    drafts = sorted((root / L.PACKS_DIR / "eml").glob("*.eml"))
    assert drafts
    for draft in drafts:
        text = _body(draft.read_bytes())
        assert "score all 5 test cases" in text and "18" not in text and "{n_cases}" not in text
    wb = openpyxl.load_workbook(root / L.PACKS_DIR / head["file"])
    shown = "\n".join(str(c.value) for name in (L.INSTRUCTIONS_SHEET, L.MORE_SHEET)
                      for row in wb[name].iter_rows() for c in row if c.value)
    assert "You will evaluate 5 response pairs" in shown
    assert "For each of 5 test cases:" in shown and "{n_cases}" not in shown
    with smtp_server() as (port, server):
        sent = run("send", str(root), "invitations", "--yes", "--smtp", f"127.0.0.1:{port}",
                   "--smtp-security", "none")
        assert sent.exit_code == 0, sent.output
    assert len(server.delivered) == 3
    for delivery in server.delivered:
        msg = email.message_from_bytes(delivery.content, policy=email.policy.default)
        assert "score all 5 test cases" in _body(msg.as_bytes())


def _first_items(root, count: int) -> None:
    """The template's items file cut to its first ``count`` items."""
    import csv

    path = root / "items.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows[:count + 1])


def test_the_answer_review_template_tells_a_study_of_five_items_five(tmp_path):
    """The answer-review instructions said "18 items, about 30-40 minutes" (its own
    sample's count) in every pack, whatever the study made from it holds."""
    import openpyxl

    from sheetflow.packs.generate import generate_packs

    root = init_study(tmp_path / "s", "answer-review")
    _first_items(root, 5)
    generate_packs(root)
    for head in packs(root):
        assert len(head["cards"]) == 5
        wb = openpyxl.load_workbook(root / L.PACKS_DIR / head["file"])
        shown = "\n".join(str(c.value) for name in (L.INSTRUCTIONS_SHEET, L.MORE_SHEET)
                          for row in wb[name].iter_rows() for c in row if c.value)
        assert "5 items, about two minutes each, in one sitting." in shown
        assert "18 items" not in shown and "{n_cases}" not in shown


def test_no_template_states_a_count_of_its_own_items():
    """A template's rater-facing texts (instructions, invitation) say how many cases
    through {n_cases} only: a number written in is its own sample's, untrue of a study
    made from it with other items."""
    import re
    import tomllib
    from pathlib import Path

    counted = re.compile(r"(?<![-\d])\b\d+ (?:[a-z]+ )?(?:items|cases|pairs|answers|"
                         r"questions|responses|outputs)\b", re.IGNORECASE)
    templates = Path(__file__).resolve().parents[1] / "templates"
    found = {}
    for folder in sorted(p for p in templates.iterdir() if p.is_dir()):
        spec = tomllib.loads((folder / "study.toml").read_text(encoding="utf-8"))
        texts = [spec["study"].get("instructions", ""),
                 *spec.get("email", {}).values()]
        if "instructions_file" in spec["study"]:
            texts.append((folder / spec["study"]["instructions_file"]).read_text(
                encoding="utf-8"))
        hits = [hit for text in texts for hit in counted.findall(text)]
        if hits:
            found[folder.name] = hits
    assert found == {}


def test_the_keep_known_template_tells_a_study_batched_by_ten_ten(tmp_path):
    """The keep-known template said "one batch of 20" in the instructions and the
    invitation as fixed text, while the pack's batches followed [design] batch_size."""
    import openpyxl

    from sheetflow.packs.generate import generate_packs

    root = init_study(tmp_path / "s", "keep-known")
    spec = root / "study.toml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("batch_size = 20",
                                                             "batch_size = 10"),
                    encoding="utf-8")
    generate_packs(root, emails=True)
    head = packs(root)[0]
    wb = openpyxl.load_workbook(root / L.PACKS_DIR / head["file"])
    shown = "\n".join(str(c.value) for name in (L.INSTRUCTIONS_SHEET, L.MORE_SHEET)
                      for row in wb[name].iter_rows() for c in row if c.value)
    assert "one batch of 10 at a time" in shown and "{batch_size}" not in shown
    drafts = sorted((root / L.PACKS_DIR / "eml").glob("*.eml"))
    assert drafts
    for draft in drafts:
        text = " ".join(_body(draft.read_bytes()).split())
        assert "one batch of 10 at a time" in text and "{batch_size}" not in text


def test_batch_size_said_in_a_study_without_batches_is_one_line(tmp_path):
    """A study without batches has no count for {batch_size}: the pack would show the
    placeholder itself."""
    from spec_helpers import check_gives_one_line

    root = init_study(tmp_path / "s", "answer-review")
    path = root / "instructions.md"
    path.write_text(path.read_text(encoding="utf-8") + "\nWork in batches of {batch_size}.\n",
                    encoding="utf-8")
    check_gives_one_line(root, ["study.toml: [study]: 'instructions_file' uses {batch_size} "
                                "but [design] sets no batch_size; add 'batch_size = N' to "
                                "[design], or take {batch_size} out"])
