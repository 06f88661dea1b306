from pathlib import Path


def test_env_lines():
    lines = Path("/app/app.env").read_text().strip().splitlines()
    assert lines == ["DB_URL=sqlite:///app.db", "DEBUG=false", "HOST=0.0.0.0", "LOG_LEVEL=info", "PORT=8080",
                     "WORKERS=4"]
