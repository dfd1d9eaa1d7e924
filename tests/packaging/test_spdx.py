# SPDX-License-Identifier: MIT
"""scripts/spdx.py on scratch trees: --check lists exactly the source files without the line,
--fix adds it in each file's comment syntax (after a shebang), leaves everything else as it was and
changes nothing the second time; in a git checkout only the files git does not ignore count."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "spdx.py")

# path: (content before, content after --fix); None after: not a source file, never changed.
TREE = {
    "include/a.hpp": ("#pragma once\n", "// SPDX-License-Identifier: MIT\n#pragma once\n"),
    "CMakeLists.txt": ("project(x)\n", "# SPDX-License-Identifier: MIT\nproject(x)\n"),
    "tool.py": ('"""Doc."""\n', '# SPDX-License-Identifier: MIT\n"""Doc."""\n'),
    "run.sh": ("#!/bin/sh\necho\n", "#!/bin/sh\n# SPDX-License-Identifier: MIT\necho\n"),
    ".ci/run": ("#!/usr/bin/env bash\n", "#!/usr/bin/env bash\n# SPDX-License-Identifier: MIT\n"),
    "gen.cpp.in": ("int x;\n", "// SPDX-License-Identifier: MIT\nint x;\n"),
    "empty.toml": ("", "# SPDX-License-Identifier: MIT\n"),
    "has.cpp": ("// title\n// SPDX-License-Identifier: MIT\n", None),
    "README.md": ("# readme\n", None),
    "data": ("no shebang\n", None),
}
MISSING = sorted(p for p, (_, after) in TREE.items() if after is not None)


class SpdxTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="spdx-")
        self.addCleanup(shutil.rmtree, self.root)
        for path, (content, _) in TREE.items():
            self.write(path, content)

    def write(self, path, content):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(content)

    def read(self, path):
        with open(os.path.join(self.root, path), encoding="utf-8") as f:
            return f.read()

    def spdx(self, mode):
        return subprocess.run([sys.executable, SCRIPT, mode, "--root", self.root],
                              capture_output=True, text=True)

    def listed(self, out):
        return sorted(line.rsplit(" ", 1)[1] for line in out.splitlines() if "no '" in line)

    def test_check_lists_the_files_without_the_line(self):
        run = self.spdx("--check")
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertEqual(self.listed(run.stdout), MISSING)

    def test_fix_adds_the_line_once(self):
        run = self.spdx("--fix")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        for path, (before, after) in TREE.items():
            self.assertEqual(self.read(path), after if after is not None else before, path)
        self.assertEqual(self.spdx("--check").returncode, 0)
        again = self.spdx("--fix")
        self.assertEqual((again.returncode, again.stdout), (0, ""))
        for path, (before, after) in TREE.items():
            self.assertEqual(self.read(path), after if after is not None else before, path)

    def test_another_licence_is_reported_not_changed(self):
        self.write("other.hpp", "// SPDX-License-Identifier: Apache-2.0\n")
        run = self.spdx("--fix")
        self.assertEqual(run.returncode, 1)
        self.assertIn("other.hpp: SPDX-License-Identifier: Apache-2.0", run.stderr)
        self.assertEqual(self.read("other.hpp"), "// SPDX-License-Identifier: Apache-2.0\n")

    def test_git_ignored_and_build_files_do_not_count(self):
        self.write("build/generated.cpp", "int y;\n")
        self.write(".venv/lib/site.py", "")
        self.write("tools/__pycache__/x.py", "")
        self.assertEqual(self.listed(self.spdx("--check").stdout), MISSING)  # no git: a walk
        if shutil.which("git") is None:
            self.skipTest("no git")
        self.write(".gitignore", "build/\n.venv/\n__pycache__/\nignored.cpp\n")
        self.write("ignored.cpp", "int z;\n")
        subprocess.run(["git", "init", "-q", self.root], check=True)
        subprocess.run(["git", "-C", self.root, "add", "include/a.hpp"], check=True)
        # A tracked file and the untracked ones git does not ignore: a new file counts at once.
        self.assertEqual(self.listed(self.spdx("--check").stdout), MISSING)


if __name__ == "__main__":
    unittest.main()
