/** The SBP bank dictionary: active members of the Faster Payments System. */
export interface SbpBank {
	member_id: number;
	name: string;
	name_en: string;
	bic: number;
}

export const SBP_BANKS: readonly SbpBank[] = [
	{ member_id: 100000000111, name: 'Сбербанк', name_en: 'Sberbank', bic: 44525225 },
	{ member_id: 100000000004, name: 'Т-Банк', name_en: 'T-Bank', bic: 44525974 },
	{ member_id: 100000000005, name: 'Банк ВТБ', name_en: 'VTB Bank', bic: 44525187 },
	{ member_id: 100000000008, name: 'АЛЬФА-БАНК', name_en: 'Alfa-Bank', bic: 44525593 },
	{ member_id: 100000000007, name: 'Райффайзенбанк', name_en: 'Raiffeisenbank', bic: 44525700 },
	{ member_id: 100000000001, name: 'Газпромбанк', name_en: 'Gazprombank', bic: 44525823 },
	{ member_id: 100000000010, name: 'Промсвязьбанк', name_en: 'Promsvyazbank', bic: 44525555 },
	{ member_id: 100000000012, name: 'Росбанк', name_en: 'Rosbank', bic: 44525256 },
	{ member_id: 100000000013, name: 'Совкомбанк', name_en: 'Sovcombank', bic: 43469743 },
	{ member_id: 100000000016, name: 'Почта Банк', name_en: 'Pochta Bank', bic: 44525214 },
	{ member_id: 100000000017, name: 'МТС-Банк', name_en: 'MTS Bank', bic: 44525232 },
	{ member_id: 100000000273, name: 'Озон Банк', name_en: 'Ozon Bank', bic: 44525068 },
	{ member_id: 100000000150, name: 'Яндекс Банк', name_en: 'Yandex Bank', bic: 44525833 },
	{
		member_id: 100000000014,
		name: 'Банк Русский Стандарт',
		name_en: 'Russian Standard Bank',
		bic: 44525151,
	},
	{ member_id: 100000000024, name: 'Хоум Банк', name_en: 'Home Bank', bic: 44525245 },
	{ member_id: 100000000006, name: 'АК БАРС БАНК', name_en: 'AK BARS Bank', bic: 49205805 },
];

export function findBank(memberId: number): SbpBank | undefined {
	return SBP_BANKS.find((bank) => bank.member_id === memberId);
}
