make_lead_data()
