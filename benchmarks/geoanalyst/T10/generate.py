make_rondonia_data()
