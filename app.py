"""RSR Studio (the app ships inside the package, rsr_core/ui): `make app`, `rsr app`, or `streamlit run app.py`
in a checkout. Streamlit serves this ASGI app: a warm-up, then the navigation script for every page run."""

import streamlit as st

from rsr_core.ui.server import MIDDLEWARE, NAVIGATION, warm_up

app = st.App(str(NAVIGATION), lifespan=warm_up, middleware=MIDDLEWARE)
