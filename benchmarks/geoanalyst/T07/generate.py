make_flood_data()
