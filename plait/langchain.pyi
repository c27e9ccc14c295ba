# The types of ``plait.langchain``, an alias of the LangChain host (see plait/_moved.py).
from plait.adapters.hosts.langchain import *  # noqa: F403
