"""catalogue: the @imqueue packages, and their facts from imqueue.org/status.json.

packages.py  the compiled-in catalogue, the exclusive pairs and their advisories, status shaping
facts.py     status.json read live, else the snapshot's copy labelled with its date
status.py    list_packages and package_status over those facts
"""
