make_fire_data()
