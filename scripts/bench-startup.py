#!/usr/bin/env python3
"""Start-up cost of kvstream commands: wall time (median of N runs) and peak memory (max RSS) per
command, each run in its own process. The commands that need no model must not load LibTorch
(cli/model_backend.h); `quality --help` loads the model plugin, for comparison.

Usage: scripts/bench-startup.py [BUILD_DIR] [RUNS]   (default: build, 20)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else 'build'
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
kvstream = os.path.abspath(os.path.join(build, 'kvstream'))
work = tempfile.mkdtemp(prefix='kvstream-startup-')
os.chdir(work)


def measure(args):
    """(median seconds, max RSS in MB) of `kvstream args` run `runs` times. The peak RSS comes from
    GNU time (/usr/bin/time, package `time`): a child forked from this interpreter would report the
    interpreter's own ~14 MB, which the kernel carries over exec."""
    seconds, rss_kb = [], []
    for _ in range(runs):
        start = time.perf_counter()
        result = subprocess.run(['/usr/bin/time', '-f', '%M', '-o', 'rss.txt', kvstream] + args,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seconds.append(time.perf_counter() - start)
        if result.returncode != 0:
            sys.exit(f'kvstream {" ".join(args)} failed')
        with open('rss.txt') as f:
            rss_kb.append(int(f.read().split()[-1]))
    return statistics.median(seconds), max(rss_kb) / 1024


# A small .kvs file for `decode`: the real KV fixture (stories260K, 512 tokens, ~0.2 MB at 8 bits).
subprocess.run([kvstream, 'encode', '--kv', 'kv/stories260K_tinystories_4x512.safetensors', '--codec', 'quant:bits=8',
                '--chunk-tokens', '64', '--out', 'tiny.kvs'], check=True, stdout=subprocess.DEVNULL)
commands = [['--help'], ['decode', 'tiny.kvs', '--out', 'tiny.safetensors'], ['encode', '--help'], ['simulate', '--help'],
            ['trace', '--help'], ['merge', '--help'], ['run', '--help'], ['quality', '--help']]
print(f'{"command":<40} {"median ms":>10} {"max RSS MB":>11}')
for args in commands:
    seconds, rss_mb = measure(args)
    print(f'{" ".join(args):<40} {1000 * seconds:>10.1f} {rss_mb:>11.1f}')
