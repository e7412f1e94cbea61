"""What the demo village is drawn from: its streets, names, businesses and churches, meter makes and sizes, the
deck of account kinds dealt to each chunk, and the season of its water use."""

from datetime import date

from accounts.models import Account

STREETS = (
    "Jericho Turnpike", "Mineola Boulevard", "Willis Avenue", "Old Country Road", "Roslyn Road",
    "Marcellus Road", "Washington Avenue", "Main Street", "First Street", "Second Street",
    "Third Street", "Front Street", "Second Avenue", "Elm Place", "Cleveland Avenue", "Garfield Avenue",
    "Harrison Avenue", "Jefferson Avenue", "Madison Avenue", "Franklin Avenue", "Lincoln Avenue",
    "Liberty Avenue", "Sheridan Boulevard", "Emory Road", "Mineola Avenue", "Latham Road",
    "Wilson Avenue", "Union Avenue", "Grant Avenue", "Hamilton Place", "Pennsylvania Avenue",
    "Westbury Avenue", "Nassau Boulevard", "Fulton Avenue", "Birch Street", "Maple Place",
    "Oak Street", "Chestnut Street", "Cherry Lane", "Hawthorne Street", "Laurel Avenue", "Linden Avenue",
    "Locust Street", "Spruce Street", "Willow Street", "Beech Street", "Poplar Street", "Cedar Place",
    "Ash Drive", "Hickory Road", "Hazel Place", "Magnolia Lane", "Park Avenue", "Park Drive",
    "Grove Street", "Highland Avenue", "Hillside Place", "Summit Avenue", "Valley Road",
    "Meadow Lane", "Brook Street", "Spring Street", "Lake Drive", "Bayview Avenue", "Harbor Road",
    "Terrace Avenue", "Prospect Place", "Morris Street", "Searing Avenue", "Hudson Place",
    "Albertson Street", "Herricks Road", "Carle Road", "Manchester Place", "Windsor Avenue",
    "Kingston Avenue", "Oxford Street", "Cambridge Avenue", "Princeton Street", "Columbia Street",
    "Dartmouth Street", "Cornell Drive", "Yale Street", "Stratford Road", "Devon Road",
    "Fairfield Avenue", "Brookside Drive", "Rose Place", "Violet Street", "Daisy Lane", "Tulip Place",
    "Lilac Lane", "Sycamore Street", "Pine Street", "Holly Place", "Ivy Street", "Evergreen Avenue",
    "Juniper Road", "Crescent Street", "Carroll Street", "Fairview Avenue", "Sagamore Avenue",
    "Seaman Avenue", "Willets Road", "Searingtown Road", "Titus Avenue", "Hicks Street",
    "Post Avenue", "Wright Avenue", "Brown Street", "Allen Place", "Davis Avenue", "Foster Place",
)

FIRST_NAMES = (
    "John", "Maria", "Michael", "Anthony", "Joseph", "Patricia", "Mary", "James", "Robert", "Linda",
    "Jose", "Ana", "Manuel", "Fernanda", "Antonio", "Luis", "Carlos", "Rosa", "Paulo", "Isabel",
    "Kevin", "Sean", "Brian", "Eileen", "Kathleen", "Thomas", "Daniel", "Christopher", "Nicole",
    "Jennifer", "Lisa", "Susan", "Karen", "Frank", "Salvatore", "Vincent", "Dominick", "Angela",
    "Theresa", "Giuseppe", "Rachel", "David", "Steven", "Howard", "Barbara", "Ruth", "Min-jun", "Ji-woo",
    "Priya", "Raj", "Anil", "Sunita", "Wei", "Mei", "Juan", "Carmen", "Miguel", "Lucia", "Diego",
    "Emily", "Olivia", "Ava", "Matthew", "Ryan", "Megan", "Lauren", "Peter", "Paul", "George",
)
LAST_NAMES = (
    "Silva", "Costa", "Ferreira", "Pereira", "Santos", "Oliveira", "Rodrigues", "Martins", "Sousa",
    "Almeida", "Russo", "Esposito", "Romano", "Colombo", "Ricci", "Marino", "Greco", "Bruno", "Gallo",
    "Conti", "DeLuca", "Mancuso", "Caruso", "Lombardi", "Murphy", "Kelly", "O'Brien", "Ryan", "Walsh",
    "McCarthy", "Byrne", "Doyle", "Fitzgerald", "Gallagher", "Sullivan", "Cohen", "Schwartz",
    "Goldberg", "Friedman", "Levine", "Katz", "Rosen", "Kim", "Lee", "Park", "Choi", "Patel", "Shah",
    "Singh", "Chen", "Wang", "Zhang", "Garcia", "Rodriguez", "Martinez", "Hernandez", "Lopez",
    "Gonzalez", "Perez", "Sanchez", "Ramirez", "Smith", "Johnson", "Williams", "Brown", "Jones",
    "Miller", "Davis", "Wilson", "Anderson", "Taylor", "Thomas", "Moore", "Jackson", "White", "Schmidt",
    "Mueller", "Nowak", "Kowalski", "Papadopoulos",
)
BUSINESS_KINDS = ("Realty LLC", "Properties LLC", "Associates LLC", "Holdings Inc.", "& Sons Inc.",
                  "Management Corp.", "Family Partnership", "Development LLC")
BUSINESS_USES = ("Deli", "Pizzeria", "Auto Repair", "Dry Cleaners", "Dental Associates",
                 "Law Offices", "Bagel Shop", "Nail Salon", "Hardware", "Pharmacy", "Diner",
                 "Physical Therapy", "Laundromat", "Bakery", "Insurance Agency", "Florist")
NONPROFITS = ("{saint} Parish", "First {faith} Church of {town}", "{street} Congregation",
              "{town} {group} Association", "{saint} School", "Nassau {group} Center",
              "{town} Fire Department Company {n}", "{street} Senior Center")
SAINTS = ("St. Aidan", "St. Anthony", "Our Lady of Fatima", "St. Mary", "Corpus Christi", "St. Paul",
          "St. Joseph", "Holy Trinity")
FAITHS = ("Presbyterian", "Methodist", "Baptist", "Lutheran", "Reformed", "Congregational")
GROUPS = ("Community", "Youth", "Veterans", "Historical", "Arts", "Health", "Portuguese Cultural")
OUT_OF_TOWN = (
    "Garden City, NY 11530", "Williston Park, NY 11596", "East Williston, NY 11596", "Carle Place, NY 11514",
    "Westbury, NY 11590", "New Hyde Park, NY 11040", "Great Neck, NY 11021", "Manhasset, NY 11030",
    "Roslyn, NY 11576", "Bayside, NY 11361", "Flushing, NY 11354", "Brooklyn, NY 11215",
    "New York, NY 10016", "Huntington, NY 11743", "Hicksville, NY 11801", "Boca Raton, FL 33432",
    "Delray Beach, FL 33444", "Naples, FL 34102", "Myrtle Beach, SC 29577", "Scottsdale, AZ 85251",
    "Stamford, CT 06901",
)
TOWN_LINE = "Mineola, NY 11501"
SBL_SECTIONS = (9, 43, 44)
MAKES = (("Neptune", "N", 45), ("Sensus", "S", 25), ("Badger", "B", 20), ("Itron", "I", 10))

# Daily use in gallons for meters over 1", by size (low, high); hospitals and schools sit at the top.
LARGE_DAILY = {"1 1/2": (600, 2_000), "2": (900, 4_000), "3": (2_500, 9_000), "4": (5_000, 18_000),
               "6": (12_000, 45_000), "8": (30_000, 95_000)}
LARGE_SIZES = (("1 1/2", 35), ("2", 35), ("3", 15), ("4", 8), ("6", 5), ("8", 2))
SMALL_SIZES = {
    Account.Category.ONE_TWO_FAMILY: (("5/8", 70), ("3/4", 25), ("1", 5)),
    Account.Category.OTHER: (("5/8", 35), ("3/4", 35), ("1", 30)),
    Account.Category.NONPROFIT: (("5/8", 30), ("3/4", 40), ("1", 30)),
}
# Two hundred accounts, as (category, meter over 1"?): 1% nonprofit, 12% other, ~3% meters over 1"
# (the other-use large meters plus about half the nonprofits'). Dealt without replacement, so even a
# small demo has every kind.
DECK = ([(Account.Category.NONPROFIT, None)] * 2 + [(Account.Category.OTHER, True)] * 5
        + [(Account.Category.OTHER, False)] * 19 + [(Account.Category.ONE_TWO_FAMILY, False)] * 174)
SPRINKLER_INCHES = ("2", "3", "4", "6", "8")
PEAK_DAY = date(2000, 7, 25).toordinal()  # the summer peak of lawn watering
YEAR_DAYS = 365.2425
