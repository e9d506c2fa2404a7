"""tools/opcodes/generate.py: the committed opcode tables are what every installed interpreter's
own opcode and dis modules say, and --check notices a table that is not."""
import re
import subprocess
import sys

from conftest import INTERPRETERS, ROOT, pythons

GENERATOR = ROOT / "tools" / "opcodes" / "generate.py"
GENERATED = ROOT / "src" / "sampler" / "python" / "opcodes_generated.cpp"


def interpreter_args():
    args = [i.path for i in INTERPRETERS + pythons.sampler_only() if not i.root]
    for i in INTERPRETERS:
        if i.root:
            args += ["--in-root", i.root, i.inner_path]
    return args


def test_opcode_tables_match_every_interpreter():
    out = subprocess.run([sys.executable, str(GENERATOR), "--check", str(GENERATED),
                          *interpreter_args()], capture_output=True, text=True)
    print(out.stdout)
    assert out.returncode == 0, out.stdout + out.stderr
    matched = [line for line in out.stdout.splitlines() if "matches" in line]
    assert len(matched) == len(INTERPRETERS) + len(pythons.sampler_only()), out.stdout


def test_check_names_a_wrong_entry(tmp_path):
    """A table with one opcode renamed fails --check under its interpreter, naming the opcode."""
    interp = next(i for i in INTERPRETERS if not i.root)
    minor = interp.version[:2]
    text = GENERATED.read_text()
    start = text.index(f"constexpr OpcodeEntry kOpcodes{minor[0]}_{minor[1]}[]")
    entry = re.compile(r'\{(\d+), "(\w+)",').search(text, start)
    wrong = text[:entry.start(2)] + "NOT_" + text[entry.start(2):]
    path = tmp_path / "opcodes_generated.cpp"
    path.write_text(wrong)
    out = subprocess.run([sys.executable, str(GENERATOR), "--check", str(path), interp.path],
                         capture_output=True, text=True)
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"opcode {entry[1]}: committed [{entry[1]}, 'NOT_{entry[2]}'" in out.stdout, out.stdout
