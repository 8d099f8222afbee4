"""A YTsaurus-style Python client for the ytsched service (``ytsched.Client``)."""

from ytsched.client.client import Client, ResponseError, find_token, find_url, find_urls

__all__ = ["Client", "ResponseError", "find_token", "find_url", "find_urls"]
