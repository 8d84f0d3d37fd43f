"""What is to be played: the tournament file (:mod:`.config`), who meets whom with which colours and seeds
(:mod:`.pairing`), and opening suites (:mod:`.suite`)."""
