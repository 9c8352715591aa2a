# %% what data/ holds
import os
import pandas as pd
print(sorted(os.listdir("data")))
for f in ["flow.csv", "o_area.csv", "d_area.csv"]:
    t = pd.read_csv(f"data/{f}")
    print(f, len(t), "rows, columns", list(t.columns))
    print(t.describe().loc[["min", "max"]])
# %% anything that says where these coordinates are?
print("sidecar or metadata files:", [f for f in os.listdir("data") if not f.endswith(".csv")] or "none")
with open("data/flow.csv") as fh:
    print("header of flow.csv:", fh.readline().strip())
print("The x/y values (0.7-9.8, 0.7-4.5) carry no CRS, unit or origin: they are a local plane that cannot be placed on the Earth.")
