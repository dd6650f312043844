"""Dates as staff read them everywhere, the admin's pages included: ISO 8601
(``FORMAT_MODULE_PATH``)."""
