"""How often `othello match --sprt` decides right: simulated matches of known strength.

    python bench/sprt_simulation.py --runs 1000 --elo -10 0 5 10 30 --seed 1

Each simulated match plays game pairs whose two games are independent draws
of A's result at a true logistic Elo difference ``elo`` (``--draws``: the
share of drawn games), through the same :class:`SPRT` and
:class:`Pentanomial` as `othello match` (:func:`simulate_sprt`), until the test decides or
``--max-pairs``.  Printed per true Elo and model: how often H0 and H1 were
accepted, how often it stayed undecided, and the mean number of games.
With elo0=0 elo1=10, H1 should be accepted at Elo 0 in at most about alpha
of the runs, and at Elo 10 in about 1 - beta of them.
"""

from __future__ import annotations

import argparse
import random
import statistics

from othello_arena.tournaments.stats import SPRT, simulate_sprt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--elo", type=float, nargs="+", default=[-10.0, 0.0, 5.0, 10.0, 30.0])
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=10.0)
    parser.add_argument("--draws", type=float, default=0.05, help="share of drawn games (Othello: a few %%)")
    parser.add_argument("--max-pairs", type=int, default=20000)
    parser.add_argument("--models", nargs="+", default=["normalized", "logistic"])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"elo0={args.elo0:g} elo1={args.elo1:g} alpha=beta=0.05, {args.runs} runs each, draws {args.draws:.0%}, "
          f"at most {args.max_pairs} pairs, seed {args.seed}")
    print("| true Elo | model | H0 | H1 | undecided | mean games | median games |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for model in args.models:
        sprt = SPRT(args.elo0, args.elo1, 0.05, 0.05, model)
        for elo in args.elo:
            rng = random.Random(f"{args.seed}:{model}:{elo}")
            runs = [simulate_sprt(elo, sprt, rng, args.draws, args.max_pairs) for _ in range(args.runs)]
            decisions = [decision for decision, _ in runs]
            games = [count for _, count in runs]
            share = {key: decisions.count(key) / args.runs for key in ("H0", "H1", "none")}
            print(f"| {elo:+g} | {model} | {share['H0']:.1%} | {share['H1']:.1%} | {share['none']:.1%} | "
                  f"{statistics.mean(games):.0f} | {statistics.median(games):.0f} |")


if __name__ == "__main__":
    main()
