"""RSR Studio: navigation only. Run with `streamlit run app.py` (or `make app`)."""

import streamlit as st

st.set_page_config(page_title="RSR Studio", layout="wide")
st.navigation(
    [
        st.Page("pages/overview.py", title="Overview", default=True),
        st.Page("pages/trajectories.py", title="Trajectories"),
        st.Page("pages/diff.py", title="Diff"),
        st.Page("pages/runbooks.py", title="Runbooks"),
        st.Page("pages/rewrite.py", title="Rewrite"),
        st.Page("pages/similarity.py", title="Similarity"),
        st.Page("pages/export.py", title="Export"),
    ]
).run()
