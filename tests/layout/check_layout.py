#!/usr/bin/env python3
"""The repository's layout against its own map (docs/ARCHITECTURE.md §2):

- the module table there lists every module with the modules it uses, bottom to top, and the CMake
  link lines (<build>/module_graph.json, written by the top-level CMakeLists.txt) declare exactly
  those arrows, none pointing up the table;
- every #include "module/..." of a module's sources names the module itself or one it uses,
  directly or through others;
- codec/'s stage folders are those of its table (the paragraph "**codec/**" there), and a stage's
  sources include from codec/ only what that table's last column names (a codec never includes
  another's);
- no file cites the design notes outside the repository (their shared docs folder) or an issue number.

Usage: check_layout.py REPOSITORY_ROOT MODULE_GRAPH_JSON
"""
import json
import os
import re
import subprocess
import sys
import unittest

ROOT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.getcwd()
GRAPH = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, 'build', 'module_graph.json')
SOURCE_EXTENSIONS = ('.h', '.cpp', '.cu', '.cuh', '.cc')
SKIPPED_DIRS = {'.git', 'tests', 'scripts', 'plotting', 'docs'}


def read(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read()


def documented_modules():
    """[(module, [modules it uses])] from the table of docs/ARCHITECTURE.md §2, in its order."""
    text = read(os.path.join(ROOT, 'docs', 'ARCHITECTURE.md'))
    section = re.search(r'^## 2\..*?(?=^## 3\.)', text, re.S | re.M)
    if not section:
        raise AssertionError('docs/ARCHITECTURE.md has no section "## 2." followed by "## 3."')
    rows = []
    for line in section.group(0).splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        match = re.fullmatch(r'`(\w+)/`', cells[0]) if len(cells) >= 3 else None
        if match:
            uses = re.findall(r'`(\w+)/?`', cells[-1])
            rows.append((match.group(1), uses))
    return rows


def codec_stages():
    """{stage folder: set of codec/ parts it may include ('top' for codec/*.h)} from the table after
    the paragraph "**codec/**" of docs/ARCHITECTURE.md."""
    text = read(os.path.join(ROOT, 'docs', 'ARCHITECTURE.md'))
    section = re.search(r'^\*\*codec/\*\*.*?\n\n(\|.*?)\n\n', text, re.S | re.M)
    if not section:
        raise AssertionError('docs/ARCHITECTURE.md: no table after the paragraph "**codec/**"')
    stages = {}
    for line in section.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        match = re.fullmatch(r'`(\w+)/`', cells[0])
        if match:
            parts = set(re.findall(r'`(\w+)/`', cells[-1]))
            if 'the top' in cells[-1]:
                parts.add('top')
            stages[match.group(1)] = parts
    return stages


def linked_modules():
    """{module: set of modules its CMake targets link} from module_graph.json, and whether the build
    has LibTorch (then every module has all its targets)."""
    graph = json.loads(read(GRAPH))['targets']
    module_of = {t['target']: t['module'] for t in graph}
    uses = {}
    for t in graph:
        deps = uses.setdefault(t['module'], set())
        for d in t['depends']:
            if module_of.get(d, t['module']) != t['module']:
                deps.add(module_of[d])
    return uses, 'kvstream_models' in module_of


def repository_files():
    """The repository's files (tracked, or new and not ignored), relative to ROOT; without git, every
    file outside dot-folders and build folders."""
    try:
        listing = subprocess.run(['git', '-C', ROOT, 'ls-files', '--cached', '--others', '--exclude-standard'],
                                 capture_output=True, text=True, check=True).stdout
        return [p for p in listing.splitlines() if os.path.isfile(os.path.join(ROOT, p))]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for folder, dirs, names in os.walk(ROOT):
            dirs[:] = [d for d in dirs if not d.startswith(('.', 'build'))]
            files += [os.path.relpath(os.path.join(folder, n), ROOT) for n in names]
        return files


def source_files(module):
    for folder, dirs, files in os.walk(os.path.join(ROOT, module)):
        for name in sorted(files):
            if name.endswith(SOURCE_EXTENSIONS):
                yield os.path.join(folder, name)


class Layout(unittest.TestCase):
    def setUp(self):
        self.table = documented_modules()
        self.uses = dict(self.table)

    def test_the_table_lists_every_module_folder_once(self):
        names = [m for m, _ in self.table]
        self.assertEqual(len(names), len(set(names)), names)
        folders = [d for d in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, d)) and d not in SKIPPED_DIRS
                   and not d.startswith(('build', '.'))]
        with_sources = sorted(d for d in folders if any(True for _ in source_files(d)))
        self.assertEqual(sorted(names), with_sources)

    def test_arrows_point_down_the_table(self):
        seen = set()
        for module, uses in self.table:
            self.assertTrue(set(uses) <= seen, f'{module} uses {sorted(set(uses) - seen)}, not below it in the table')
            seen.add(module)

    def test_cmake_links_match_the_table(self):
        linked, with_torch = linked_modules()
        self.assertTrue(set(linked) <= set(self.uses), f'modules missing from the table: {sorted(set(linked) - set(self.uses))}')
        for module, uses in self.table:
            # A build without LibTorch lacks some targets, hence some arrows; a module with no target in
            # this build (fuzz/ without -DKVSTREAM_FUZZ=ON) declares none.
            if not with_torch or module not in linked:
                self.assertTrue(linked.get(module, set()) <= set(uses), f'{module}: CMake links vs docs/ARCHITECTURE.md §2')
            else:
                self.assertEqual(sorted(linked.get(module, set())), sorted(uses), f'{module}: CMake links vs docs/ARCHITECTURE.md §2')

    def test_includes_stay_within_what_a_module_uses(self):
        closure = {}
        for module, uses in self.table:  # bottom to top: every used module's closure is known
            closure[module] = {module}.union(*(closure[u] for u in uses)) if uses else {module}
        include = re.compile(r'^\s*#\s*include\s+"(\w+)/', re.M)
        problems = []
        for module in self.uses:
            for path in source_files(module):
                for used in include.findall(read(path)):
                    if used in self.uses and used not in closure[module]:
                        problems.append(f'{os.path.relpath(path, ROOT)} includes {used}/, which {module}/ does not use')
        self.assertEqual(problems, [])

    def test_codec_stages_include_only_what_their_row_names(self):
        stages = codec_stages()
        folders = sorted(d for d in os.listdir(os.path.join(ROOT, 'codec'))
                         if os.path.isdir(os.path.join(ROOT, 'codec', d)) and any(True for _ in source_files('codec/' + d)))
        self.assertEqual(sorted(stages), folders, 'codec/ folders vs the table after "**codec/**"')
        include = re.compile(r'^\s*#\s*include\s+"codec/([^"]+)"', re.M)
        problems = []
        for stage, allowed in stages.items():
            for path in source_files('codec/' + stage):
                for target in include.findall(read(path)):
                    part = target.split('/')[0] if '/' in target else 'top'
                    if part != stage and part not in allowed:
                        problems.append(f'{os.path.relpath(path, ROOT)} includes codec/{target}: {stage}/ may include '
                                        f'{sorted(allowed)}')
        self.assertEqual(problems, [])

    def test_no_citation_leaves_the_repository(self):
        pattern = re.compile('shared' + '/docs|issue [0-9]')  # spelt apart: this file must not match itself
        problems = []
        for path in repository_files():
            if path.endswith(SOURCE_EXTENSIONS + ('.md', '.py', '.sh')):
                for number, line in enumerate(read(os.path.join(ROOT, path)).splitlines(), 1):
                    if pattern.search(line):
                        problems.append(f'{path}:{number}: {line.strip()}')
        self.assertEqual(problems, [])


if __name__ == '__main__':
    unittest.main(argv=sys.argv[:1], verbosity=2)
