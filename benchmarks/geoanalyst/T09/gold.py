roads = gpd.read_file("data/roads.geojson")
defo = gpd.read_file("data/deforestedArea.geojson")
zone = roads.buffer(5500).union_all()
inside = defo.geometry.intersection(zone).area.sum()
pct = inside / zone.area * 100
pd.DataFrame({"percentage_deforestation": [round(pct, 4)]}).to_csv("pred_results/deforestation_rate.csv", index=False)
print(pct)
