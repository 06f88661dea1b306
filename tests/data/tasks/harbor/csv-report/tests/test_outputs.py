def test_report():
    assert open('/app/out.txt').read() == 'a,1\n'
