"""The Streamlit app's support code: services, background jobs, view data and rendering helpers."""
