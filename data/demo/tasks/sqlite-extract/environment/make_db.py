import sqlite3

rows = [("kettle", 24.5, "kitchen"), ("mug", 6.0, "kitchen"), ("lamp", 31.0, "home"), ("pen", 1.2, "office"),
        ("chair", 89.99, "home"), ("notebook", 4.5, "office"), ("toaster", 20.0, "kitchen"),
        ("backpack", 45.0, "travel"), ("umbrella", 19.99, "travel"), ("desk", 150.0, "office")]
con = sqlite3.connect("/app/shop.db")
con.execute("CREATE TABLE products(name TEXT, price REAL, category TEXT)")
con.executemany("INSERT INTO products VALUES (?, ?, ?)", rows)
con.commit()
