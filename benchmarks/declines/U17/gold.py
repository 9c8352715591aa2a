# %% what data/ holds
import os
import geopandas as gpd
print(sorted(os.listdir("data")))
bg = gpd.read_file("data/HamiltonDemographics.geojson")
sa = gpd.read_file("data/BusServiceArea.geojson")
print("block groups:", len(bg), bg.crs, "| service areas:", len(sa), sa.crs)
# %% the two thresholds of the selection
for label, share in (("missing as 0", bg["households_ACSHHBPOV"].fillna(0)), ("missing dropped", bg["households_ACSHHBPOV"].dropna())):
    p50, p80 = share.quantile(0.5), share.quantile(0.8)
    both = ((share > p80) & (share < p50)).sum()
    print(f"{label}: median {p50:.2f} %, 80th percentile {p80:.2f} %, block groups above P80 and below the median: {both}")
print("Above the 80th percentile and below the median cannot both hold: the request contradicts itself.")
