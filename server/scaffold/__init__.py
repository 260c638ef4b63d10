"""scaffold: scaffold_service and scaffold_client, code that compiles on the framework.

types.py      service names, the Param/Method input models, TypeScript type analysis
templates.py  the service and client templates, as structured data and markdown
manifest.py   their package.json (ESM, the documented majors pinned) and the IMQ_REDIS broker config
object_types.py  object-literal types lifted into @classType() classes
wiring.py     a service's `calls`: the clients of the services it calls, wired in
placement.py  the reply's words for files written into a folder (or a dry run's)
"""
