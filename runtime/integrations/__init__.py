"""Adapters to inference libraries; each module imports its library and is imported only on
request (`import grammask.runtime.integrations.transformers`), never by the runtime itself."""
