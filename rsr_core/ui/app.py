"""The studio server: `rsr app` (and `streamlit run app.py` in a checkout, whose app.py says the same) serve
this ASGI app. Streamlit finds `app` here, warms the process up in its lifespan (rsr_core/ui/server.py) and
runs the navigation script (rsr_core/ui/navigation.py, the page list) for every page run."""

import streamlit as st

from rsr_core.ui.server import MIDDLEWARE, NAVIGATION, warm_up

app = st.App(str(NAVIGATION), lifespan=warm_up, middleware=MIDDLEWARE)
