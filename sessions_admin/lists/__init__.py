"""Reading a list of sessions, with no HTTP in it: what the session list, its labelled
pages and the review sources build their pages from.

Above the store and our data (it reads both), below the views (which parse a
request's parameters and hand this layer values).
"""
