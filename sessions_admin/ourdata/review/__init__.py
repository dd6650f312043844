"""What reviewers write about sessions: notes, labels, review queues and verdicts.

All of it is ours, in Django's own database (never the store), and every row
that names a session names its store too (:mod:`sessions_admin.ourdata.storename`):
a page reads only its own store's rows.

* :mod:`.models` -- :class:`~.models.Note`, :class:`~.models.Label`,
  :class:`~.models.SessionLabel`, :class:`~.models.ReviewQueue`,
  :class:`~.models.ReviewItem`, and the permissions "Can annotate",
  "Can delete any note", "Can manage review queues";
* :mod:`.notes`, :mod:`.labels` -- adding, editing and reading them for pages;
* :mod:`.queues` -- making a queue, the concurrency-safe claim of the next item,
  progress;
* :mod:`.verdicts` -- who may give a verdict (the claim's holder or a queue
  manager), giving it, and the earlier verdicts a change keeps
  (:class:`~.models.EarlierVerdict`);
* :mod:`.forget` -- what a deleted session takes with it (notes and labels go,
  queue items are marked "session deleted", verdict kept, text gone).
"""
