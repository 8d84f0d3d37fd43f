"""Playing a tournament: the runner, one game as plain data (:mod:`.jobs`), where games run (:mod:`.pools`),
builds, each game's live log and the terminal display."""
