#!/bin/bash
python3 -c "
import sqlite3
rows = sqlite3.connect('/app/shop.db').execute('SELECT name FROM products WHERE price > 20 ORDER BY name')
open('/app/expensive.txt', 'w').write(''.join(r[0] + '\n' for r in rows))
"
