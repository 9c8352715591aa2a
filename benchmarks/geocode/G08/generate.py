# Twelve airports (IATA code, lon/lat) and a list of flight legs.
airports = pd.DataFrame({
    "iata": ["LHR", "CDG", "FRA", "MAD", "FCO", "JFK", "ORD", "LAX", "NRT", "SIN", "SYD", "GRU"],
    "lon": [-0.4543, 2.5479, 8.5622, -3.5676, 12.2389, -73.7781, -87.9048, -118.4085, 140.3929, 103.9915, 151.1772, -46.4731],
    "lat": [51.47, 49.0097, 50.0379, 40.4983, 41.8003, 40.6413, 41.9742, 33.9416, 35.772, 1.3644, -33.9399, -23.4356],
})
airports.to_csv("data/airports.csv", index=False)
legs = pd.DataFrame({"origin": ["LHR", "JFK", "CDG", "SIN", "LAX", "FRA", "GRU", "MAD"], "dest": ["JFK", "LAX", "NRT", "SYD", "NRT", "SIN", "MAD", "ORD"]})
legs.to_csv("data/legs.csv", index=False)
