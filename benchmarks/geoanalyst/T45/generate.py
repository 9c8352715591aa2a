write_ml_raw()
