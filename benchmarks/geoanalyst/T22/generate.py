write_ml_derived()
