"""What runs code the parser cannot see: the effect rules for code handed to a runner.

:mod:`.unknown` judges programs no table knows by what they are handed (another
program's argv, shell text, deleting verbs and options, HTTP methods, SQL) and
assignments that name programs; :mod:`.runners` the programs that run what they
are handed or delete as a side effect (``at``, ``make -f /dev/stdin``, ``tar
--remove-files``, ``crontab``, disks, users); :mod:`.editors` editors given
commands; :mod:`.interpreters` interpreters and database clients;
:mod:`.python_code` Python code by what it can reach.
"""
