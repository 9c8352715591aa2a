make_elk_data()
