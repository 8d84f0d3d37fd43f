#!/bin/sh
# The champion against the Python peers, one rung after another (bench/RESULTS.md, issue 16).
# Usage: sh bench/peers/run_ladder.sh OUT_DIR [TIME] [SEED]
# Each rung is one `othello match` over the balanced openings, colours swapped, one game at a time.
set -e
out=${1:?output directory}
time=${2:-2}
seed=${3:-16}
mkdir -p "$out"
rung() {  # rung NAME GAMES COMMAND
    echo "== $1: $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
    othello match champion "openings:$1=$3" --games "$2" --openings balanced --time "$time" --seed "$seed" \
        -j 1 --quiet --out "$out/$1"
}
rung r42 20 "python bench/peers/reversi42_agent.py {name}"
rung rr-alphabeta 20 "python bench/peers/rust_reversi_agent.py {name} --player alphabeta"
rung rr-mcts 10 "python bench/peers/rust_reversi_agent.py {name} --player mcts"
rung r42-depth2 10 "python bench/peers/reversi42_agent.py {name} --depth 2 --share 0"
rung rr-piece 10 "python bench/peers/rust_reversi_agent.py {name} --player piece"
echo "== done: $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
