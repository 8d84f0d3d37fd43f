"""The class server: students submit versions, each is built and checked in the sandbox, then plays a ladder.

``othello class init DIR`` makes a class folder, ``othello class serve DIR``
runs the web API with its admission worker and ladder scheduler,
``othello class submit`` sends a version from a terminal, ``othello class
final`` and ``othello class export`` give the final tournament and the grade
sheet.  Everything the class is lives in ``DIR/class.sqlite`` (WAL) and the
folders beside it; a killed server loses nothing.
"""
